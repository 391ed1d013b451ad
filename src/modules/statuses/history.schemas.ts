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
