import type { Static } from 'typebox'
import { Type } from 'typebox'
import { Timestamp } from '../../lib/schema.ts'

/** One value update (SPEC §6). */
export const HistoryEntrySchema = Type.Object(
  {
    value: Type.String(),
    at: Timestamp(),
    by: Type.Union([Type.Object({ userId: Type.String(), name: Type.String() }), Type.Null()], {
      description:
        'Who set the value; null when the caller may not see the user list (accessTypeUserList)',
    }),
  },
  { additionalProperties: false },
)
export type HistoryEntry = Static<typeof HistoryEntrySchema>
