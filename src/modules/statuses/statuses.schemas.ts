import type { Static } from 'typebox'
import { Type } from 'typebox'
import { asBodyField, StringEnum, Timestamp, withReadOnlyProperties } from '../../lib/schema.ts'
import { MultiLineText, SingleLineText } from '../../lib/text.ts'

export const ACCESS_TYPES = ['public', 'private'] as const
export const ACCESS_LEVELS = ['public', 'private', 'owner'] as const
export type AccessType = (typeof ACCESS_TYPES)[number]
export type AccessLevel = (typeof ACCESS_LEVELS)[number]

/** Fields a client can read but never set: sending one is rejected as read-only. */
export const READ_ONLY_FIELDS = new Set([
  'id',
  'shareId',
  'shareID',
  'statusKey',
  'changeCount',
  'createdAt',
  'updatedAt',
  'valueUpdatedAt',
  'stale',
  'staleSince',
])

/** The shortest and longest silence `staleAfter` may name, in seconds (docs/notifications.md#staleness). */
export const STALE_AFTER_MIN = 60
export const STALE_AFTER_MAX = 31_536_000

/** At most this many entries in a status's value palette (docs/app.md#value-palette). */
export const MAX_PALETTE_ENTRIES = 12

/** A value the owner offers, with its colour: a value and a colorNo, as on the status. */
export const PaletteEntrySchema = Type.Object(
  {
    value: SingleLineText({ minLength: 1, maxLength: 10 }),
    colorNo: Type.Integer({ minimum: 1, maximum: 12 }),
  },
  { $id: 'PaletteEntry', additionalProperties: false },
)
export type PaletteEntry = Static<typeof PaletteEntrySchema>

const PALETTE_DESCRIPTION =
  'The value palette (docs/app.md#value-palette): a write that sets one of these values without `colorNo` takes its colour.'

/** A status value's lengths, in code points (docs/api.md#validation-rules). */
const VALUE_LENGTHS = { minLength: 1, maxLength: 10 }

/**
 * A value sent as a plain-text body (docs/api.md#set-a-value-as-plain-text): the rules of
 * `value` in JSON, and its mistakes name `value` as they would there.
 */
export const StatusValueTextSchema = asBodyField(
  SingleLineText({
    ...VALUE_LENGTHS,
    description:
      'The value, as UTF-8 text: one trailing line break is left out; the rules of `value` apply.',
    examples: ['OCCUPIED'],
  }),
  'value',
)

/** A value's end, as the plain-text write takes it: query parameters (docs/api.md#values-that-end). */
export const ValueEndQuerySchema = Type.Object({
  valueUntil: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'When the value ends: an instant with its offset, or an ISO 8601 duration from the write (`PT45M`); 1 minute to 366 days ahead',
    }),
  ),
  valueAfter: Type.Optional(
    SingleLineText({
      ...VALUE_LENGTHS,
      description:
        'The value written when `valueUntil` passes; by default the value before this write',
    }),
  ),
})

/** Properties a client may set, with their limits (docs/api.md#validation-rules). */
export const StatusInputSchema = withReadOnlyProperties(
  Type.Object(
    {
      name: Type.Optional(SingleLineText({ minLength: 3, maxLength: 42 })),
      type: Type.Optional(StringEnum(['text'])),
      value: Type.Optional(SingleLineText(VALUE_LENGTHS)),
      accessType: Type.Optional(StringEnum(ACCESS_TYPES)),
      description: Type.Optional(MultiLineText(400)),
      colorNo: Type.Optional(Type.Integer({ minimum: 1, maximum: 12 })),
      // "owners" is the seed sample response's spelling; accepted, answered as "owner"
      accessTypeUserList: Type.Optional(StringEnum([...ACCESS_LEVELS, 'owners'])),
      accessTypeHistory: Type.Optional(StringEnum(ACCESS_LEVELS)),
      listed: Type.Optional(
        Type.Boolean({
          description:
            'Found by search when the status is also public (docs/accounts.md#discovery)',
        }),
      ),
      palette: Type.Optional(
        Type.Union(
          [Type.Array(PaletteEntrySchema, { maxItems: MAX_PALETTE_ENTRIES }), Type.Null()],
          {
            description: `${PALETTE_DESCRIPTION} At most ${MAX_PALETTE_ENTRIES} entries, each value once; null or [] clears it.`,
          },
        ),
      ),
      staleAfter: Type.Optional(
        Type.Union(
          [Type.Integer({ minimum: STALE_AFTER_MIN, maximum: STALE_AFTER_MAX }), Type.Null()],
          {
            description:
              'Seconds without a value update after which the status reads stale (docs/notifications.md#staleness); null: never.',
          },
        ),
      ),
      valueUntil: Type.Optional(
        Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
          description:
            'When the value ends (docs/api.md#values-that-end): an instant with its offset, or an ISO 8601 duration from the write (`PT45M`); 1 minute to 366 days ahead. Then `valueAfter` is written. null cancels a pending end, as does a value written without `valueUntil`.',
          examples: ['PT45M', '2026-05-04T18:00:00Z'],
        }),
      ),
      valueAfter: Type.Optional(
        SingleLineText({
          ...VALUE_LENGTHS,
          description:
            'The value written when `valueUntil` passes; by default the value before this write. Only with `valueUntil`.',
        }),
      ),
    },
    {
      $id: 'StatusInput',
      additionalProperties: false,
      minProperties: 1,
      description: 'Any of the updatable properties; at least one.',
      examples: [{ name: 'Meeting room 4', value: 'OCCUPIED', colorNo: 2 }],
    },
  ),
  READ_ONLY_FIELDS,
)
export type StatusInput = Static<typeof StatusInputSchema>

export const StatusSchema = Type.Object(
  {
    id: Type.String({ description: '21-character status id' }),
    shareId: Type.String({ description: 'Public share id (8 lowercase base32 characters)' }),
    statusKey: Type.Union([Type.String(), Type.Null()], {
      description: "The owner's key for this status; null for anyone but the owner",
    }),
    name: Type.String(),
    type: StringEnum(['text']),
    value: Type.Union([Type.String(), Type.Null()]),
    accessType: StringEnum(ACCESS_TYPES),
    description: Type.String(),
    colorNo: Type.Integer({ minimum: 1, maximum: 12 }),
    accessTypeUserList: StringEnum(ACCESS_LEVELS),
    accessTypeHistory: StringEnum(ACCESS_LEVELS),
    listed: Type.Boolean({
      description: 'Found by search while the status is public (docs/accounts.md#discovery)',
    }),
    palette: Type.Array(PaletteEntrySchema, {
      description: `${PALETTE_DESCRIPTION} [] when none.`,
    }),
    staleAfter: Type.Union(
      [Type.Integer({ minimum: STALE_AFTER_MIN, maximum: STALE_AFTER_MAX }), Type.Null()],
      {
        description: 'Seconds of silence after which the status reads stale; null: never',
      },
    ),
    stale: Type.Boolean({
      description:
        'True once staleAfter seconds passed since the last value update (or the creation), until the next one',
    }),
    staleSince: Type.Union([Timestamp(), Type.Null()], {
      description: 'When it turned stale; null while it is not',
    }),
    changeCount: Type.Integer({ minimum: 0 }),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
    valueUpdatedAt: Type.Union([Timestamp(), Type.Null()]),
    valueUntil: Type.Union([Timestamp(), Type.Null()], {
      description:
        'When the current value ends and `valueAfter` is written (docs/api.md#values-that-end); null: it does not end',
    }),
    valueAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'The value written when `valueUntil` passes; null when no end is pending',
    }),
  },
  {
    $id: 'Status',
    additionalProperties: false,
    description: 'A status (docs/api.md#the-status-object)',
  },
)
export type Status = Static<typeof StatusSchema>

export const StatusListEntrySchema = Type.Object(
  {
    statusId: Type.String(),
    statusKey: Type.Union([Type.String(), Type.Null()]),
    shareId: Type.String(),
    name: Type.String(),
  },
  {
    $id: 'StatusListEntry',
    additionalProperties: false,
    description: 'A status in your list (docs/api.md#status-list-entry)',
  },
)
export type StatusListEntry = Static<typeof StatusListEntrySchema>

export const StatusIdParamsSchema = Type.Object({ statusId: Type.String() })
export const StatusKeyParamsSchema = Type.Object({ statusKey: Type.String() })

export const MAX_PAGE_SIZE = 1000
export const ListQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  // unknown query parameters (cache busters and the like) are ignored, not refused
)

/**
 * Status key format (docs/api.md#status-keys): URL-unreserved characters, 1 to 100 of them. `.` and `..`
 * alone are refused: clients and proxies rewrite them out of a URL as path segments.
 */
export const STATUS_KEY_PATTERN = /^(?!\.\.?$)[A-Za-z0-9\-._~]{1,100}$/
