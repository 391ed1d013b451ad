// The client's types are the server's own: each is `Static<typeof …>` of the TypeBox schema
// that validates the request or describes the response, imported as a type (nothing of the
// server is in the built JavaScript). The published declarations are generated from the same
// schemas by scripts/build.ts, which proves them equal to these.
import type { Static } from 'typebox'
import type { ErrorSchema } from '../../../src/lib/error-schema.ts'
import type { ApiKeySchema } from '../../../src/modules/keys/keys.schemas.ts'
import type {
  HistoryDurationsSchema,
  HistoryEntrySchema,
} from '../../../src/modules/statuses/history.schemas.ts'
import type { RoleInvitationSchema } from '../../../src/modules/statuses/invitations.schemas.ts'
import type { ShareViewSchema } from '../../../src/modules/statuses/share-view.ts'
import type {
  StatusInputSchema,
  StatusListEntrySchema,
  StatusSchema,
} from '../../../src/modules/statuses/statuses.schemas.ts'
import type { CheckAuthSchema } from '../../../src/modules/users/users.schemas.ts'

/** A status, as the owner or anyone who may see it reads it. */
export type Status = Static<typeof StatusSchema>
/** What a write may set: any of the updatable properties. */
export type StatusInput = Static<typeof StatusInputSchema>
/** A status in your list. */
export type StatusListEntry = Static<typeof StatusListEntrySchema>
/** One value update in a status's history. */
export type HistoryEntry = Static<typeof HistoryEntrySchema>
/** The time a status held each value over a range. */
export type HistoryDurations = Static<typeof HistoryDurationsSchema>
/** An invitation to a role on a status; a transfer is one for the role owner. */
export type RoleInvitation = Static<typeof RoleInvitationSchema>
/** The anonymous view of a public status (what a share page shows). */
export type ShareView = Static<typeof ShareViewSchema>
/** Who an API key belongs to, and what it may do. */
export type CheckAuth = Static<typeof CheckAuthSchema>
/** One of your API keys, without its secret. */
export type ApiKey = Static<typeof ApiKeySchema>
/** The body of every error response. */
export type ErrorBody = Static<typeof ErrorSchema>
/** The stable machine-readable error codes. */
export type ErrorCode = ErrorBody['errorCode']
