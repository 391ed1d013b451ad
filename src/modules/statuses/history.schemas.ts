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
        'Who set the value; null when the caller may not see the user list (accessTypeUserList)',
    }),
  },
  { $id: 'HistoryEntry', additionalProperties: false, description: 'One value update' },
)
export type HistoryEntry = Static<typeof HistoryEntrySchema>
