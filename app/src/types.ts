// The API's shapes, from the server's own schemas (no copy to keep in step): the app is
// type-checked against exactly what the routes validate and answer.
import type { Static } from 'typebox'
import type { ProfileSchema, SessionSchema } from '../../src/modules/accounts/accounts.schemas.ts'
import type {
  StatusInputSchema,
  StatusListEntrySchema,
  StatusSchema,
} from '../../src/modules/statuses/statuses.schemas.ts'

export type Profile = Static<typeof ProfileSchema>
export type SessionView = Static<typeof SessionSchema>
export type Status = Static<typeof StatusSchema>
export type StatusInput = Static<typeof StatusInputSchema>
export type StatusListEntry = Static<typeof StatusListEntrySchema>
