import type { Static } from 'typebox'
import { Type } from 'typebox'
import { Timestamp } from '../../lib/schema.ts'
import { SingleLineText } from '../../lib/text.ts'

/** At most this many entries in a schedule (docs/api.md#schedules). */
export const MAX_SCHEDULE_ENTRIES = 20

/** How many fires ahead a schedule shows (`next`). */
export const NEXT_FIRES = 5

const ScheduleEntrySchema = Type.Object(
  {
    cron: Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        "When the entry fires: 5 fields (minute hour day-of-month month day-of-week), read in the schedule's `timezone`",
      examples: ['0 18 * * 1-5'],
    }),
    value: SingleLineText({ minLength: 1, maxLength: 10, description: 'The value it sets' }),
    colorNo: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 12,
        description: "The colour it sets; without it, the palette's colour for the value",
      }),
    ),
  },
  { $id: 'ScheduleEntry', additionalProperties: false },
)

export const ScheduleInputSchema = Type.Object(
  {
    timezone: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The IANA time zone the entries are read in',
      examples: ['Europe/Berlin'],
    }),
    entries: Type.Array(ScheduleEntrySchema, { minItems: 1, maxItems: MAX_SCHEDULE_ENTRIES }),
  },
  {
    $id: 'ScheduleInput',
    additionalProperties: false,
    examples: [
      {
        timezone: 'Europe/Berlin',
        entries: [
          { cron: '0 9 * * 1-5', value: 'OPEN' },
          { cron: '0 18 * * 1-5', value: 'CLOSED' },
        ],
      },
    ],
  },
)
export type ScheduleInput = Static<typeof ScheduleInputSchema>

export const ScheduleSchema = Type.Object(
  {
    timezone: Type.Union([Type.String(), Type.Null()], {
      description: 'The IANA time zone, as the service spells it; null without a schedule',
    }),
    entries: Type.Array(ScheduleEntrySchema, { description: 'None without a schedule' }),
    next: Type.Array(
      Type.Object(
        { at: Timestamp(), value: Type.String() },
        { additionalProperties: false, description: 'A fire ahead: when, and the value it sets' },
      ),
      { description: `The next ${NEXT_FIRES} fires, earliest first` },
    ),
    updatedAt: Type.Union([Timestamp(), Type.Null()], {
      description: 'When the schedule was last set; null without a schedule',
    }),
  },
  { $id: 'Schedule', additionalProperties: false, description: "A status's schedule" },
)
export type Schedule = Static<typeof ScheduleSchema>
