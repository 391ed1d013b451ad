import type { Static } from 'typebox'
import { Type } from 'typebox'
import { Timestamp } from '../../lib/schema.ts'

/** One value update (docs/sharing.md#history). */
export const HistoryEntrySchema = Type.Object(
  {
    value: Type.String(),
    at: Timestamp(),
    by: Type.Union([Type.Object({ userId: Type.String(), name: Type.String() }), Type.Null()], {
      description:
        'Who set the value; null when the caller may not see the user list (accessTypeUserList), and on values the service wrote (`via: "schedule"`)',
    }),
    via: Type.Union(
      [
        Type.Object(
          {
            type: Type.Literal('key'),
            keyId: Type.String({ description: 'The id of the API key the value was written with' }),
            label: Type.Union([Type.String(), Type.Null()], {
              description: "The key's label; null when it has none, or was deleted since",
            }),
          },
          { additionalProperties: false },
        ),
        Type.Literal('schedule'),
        Type.Null(),
      ],
      {
        description:
          'How the value was set: `"schedule"` when the service wrote it (a value that ended, a schedule; docs/api.md#values-that-end; `by` is then null); which of your API keys set it (a device, a script), on the entries you wrote yourself; null on the others and on values set from the app or the CLI',
      },
    ),
  },
  { $id: 'HistoryEntry', additionalProperties: false, description: 'One value update' },
)
export type HistoryEntry = Static<typeof HistoryEntrySchema>

/** The range of GET …/history/durations (docs/api.md#time-in-each-value). */
export const DurationsQuerySchema = Type.Object({
  from: Timestamp({ description: 'Start of the range (RFC 3339)' }),
  to: Type.Optional(
    Timestamp({ description: 'End of the range (RFC 3339); now when absent or later than now' }),
  ),
})

export const ValueTimeSchema = Type.Object(
  {
    value: Type.String(),
    seconds: Type.Number({ minimum: 0, description: 'Time the status held this value' }),
    share: Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'Its part of `trackedSeconds` (the shares add up to 1)',
    }),
  },
  { additionalProperties: false },
)

export const HistoryDurationsSchema = Type.Object(
  {
    from: Timestamp(),
    to: Timestamp({ description: 'The end answered: the one asked for, or now if earlier' }),
    trackedSeconds: Type.Number({
      minimum: 0,
      description:
        'Time of the range with a known value: none before the status was created or before its oldest entry within retention',
    }),
    values: Type.Array(ValueTimeSchema, {
      description: 'Each value held in the range, the longest held first',
    }),
  },
  {
    $id: 'HistoryDurations',
    additionalProperties: false,
    description: 'Time in each value over a range',
  },
)
export type HistoryDurations = Static<typeof HistoryDurationsSchema>
