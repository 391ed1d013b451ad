import type { Static } from 'typebox'
import { Type } from 'typebox'
import { StringEnum, Timestamp } from '../../lib/schema.ts'
import { SingleLineText } from '../../lib/text.ts'

// A user's notification rule for one status (docs/notifications.md#rules).

/** Values a `changesTo` / `leaves` rule names: status values (1–10 characters), 1 to 20 of them. */
export const MAX_RULE_VALUES = 20
const ruleValues = (description: string) =>
  Type.Array(SingleLineText({ minLength: 1, maxLength: 10 }), {
    minItems: 1,
    maxItems: MAX_RULE_VALUES,
    uniqueItems: true,
    description,
  })

/** The most channels one rule may name (more than any plan lets a user have). */
export const MAX_RULE_CHANNELS = 100

export const RuleConditionSchema = Type.Union(
  [
    StringEnum(['any', 'stale'], {
      description: '`any`: every value update; `stale`: the status went quiet (staleAfter)',
    }),
    Type.Object(
      {
        changesTo: Type.Optional(
          ruleValues('An update that sets one of these values (the same value again included)'),
        ),
        leaves: Type.Optional(
          ruleValues('An update from one of these values to a value not among them'),
        ),
      },
      {
        additionalProperties: false,
        minProperties: 1,
        description:
          '`changesTo`, `leaves` or both: an update that either of them names (docs/notifications.md#rules)',
      },
    ),
  ],
  { $id: 'NotificationCondition', description: 'When you are notified' },
)
export type RuleCondition = Static<typeof RuleConditionSchema>

const ChannelIds = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: MAX_RULE_CHANNELS,
  uniqueItems: true,
})

export const RuleInputSchema = Type.Object(
  {
    when: RuleConditionSchema,
    channels: Type.Optional(
      Type.Union([ChannelIds, Type.Null()], {
        description: 'Ids of your own channels; absent or null: all of your channels',
      }),
    ),
    byOthers: Type.Optional(
      Type.Boolean({
        description:
          "true: skip changes you made yourself (any of your keys or sessions, and your values' ends and schedules); default false",
      }),
    ),
  },
  {
    $id: 'NotificationRuleInput',
    additionalProperties: false,
    description: 'Your rule for this status (docs/notifications.md#rules)',
    examples: [
      { when: { changesTo: ['FAILING'] } },
      { when: { changesTo: ['BUSY'], leaves: ['FREE'] }, byOthers: true },
      { when: 'any', channels: ['Xq3…'] },
    ],
  },
)
export type RuleInput = Static<typeof RuleInputSchema>

export const RuleSchema = Type.Object(
  {
    statusId: Type.String(),
    when: Type.Union([RuleConditionSchema, Type.Null()], {
      description: 'When you are notified; null: you have no rule for this status (not notified)',
    }),
    channels: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: 'The channels notified; null: all of your channels',
    }),
    byOthers: Type.Boolean({ description: 'true: changes you made yourself are skipped' }),
    createdAt: Type.Union([Timestamp(), Type.Null()]),
    updatedAt: Type.Union([Timestamp(), Type.Null()]),
  },
  {
    $id: 'NotificationRule',
    additionalProperties: false,
    description: 'Your notification rule for a status (docs/notifications.md#rules)',
    examples: [
      {
        statusId: 'aQHwS9dTxhRMpO5YH1z4I',
        when: { changesTo: ['FAILING'] },
        channels: null,
        byOthers: false,
        createdAt: '2026-11-29T08:00:00.000Z',
        updatedAt: '2026-11-29T08:00:00.000Z',
      },
    ],
  },
)
export type Rule = Static<typeof RuleSchema>
