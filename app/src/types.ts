// The API's shapes, from the server's own schemas (no copy to keep in step): the app is
// type-checked against exactly what the routes validate and answer.
import type { Static } from 'typebox'
import type {
  AuthSettingsSchema,
  ChangedProfileSchema,
  ProfileSchema,
  SessionSchema,
} from '../../src/modules/accounts/accounts.schemas.ts'
import type {
  PasskeySchema,
  RegistrationOptionsSchema,
} from '../../src/modules/accounts/passkeys.schemas.ts'
import type {
  AdminInvitationSchema,
  AdminSignInLinkSchema,
  AdminUserSchema,
  InstanceSchema,
} from '../../src/modules/admin/admin.schemas.ts'
import type {
  AuditEventSchema,
  SecurityEventSchema,
} from '../../src/modules/audit/audit.schemas.ts'
import type { BoardSchema } from '../../src/modules/boards/boards.schemas.ts'
import type {
  ApiKeySchema,
  NewApiKeySchema,
  RotatedApiKeySchema,
} from '../../src/modules/keys/keys.schemas.ts'
import type { SCOPES } from '../../src/modules/keys/scopes.ts'
import type {
  ChannelSchema,
  DeliveryAttemptSchema,
  NewChannelSchema,
} from '../../src/modules/notifications/channels.schemas.ts'
import type { WEBHOOK_FORMATS } from '../../src/modules/notifications/webhook-channel.ts'
import type { PushPayload } from '../../src/modules/notifications/webpush-channel.ts'
import type {
  ScheduleInputSchema,
  ScheduleSchema,
} from '../../src/modules/schedules/schedules.schemas.ts'
import type {
  HistoryDurationsSchema,
  HistoryEntrySchema,
} from '../../src/modules/statuses/history.schemas.ts'
import type {
  CreatedInvitationLinkSchema,
  InvitationLinkPreviewSchema,
  InvitationLinkSchema,
  RoleInvitationSchema,
} from '../../src/modules/statuses/invitations.schemas.ts'
import type { SearchResultSchema } from '../../src/modules/statuses/search.service.ts'
import type {
  NewShareLinkSchema,
  ShareLinkSchema,
} from '../../src/modules/statuses/share-links.service.ts'
import type {
  StatusUserSchema,
  SubscriptionSchema,
} from '../../src/modules/statuses/sharing.schemas.ts'
import type {
  PaletteEntrySchema,
  StatusListEntrySchema,
  StatusSchema,
} from '../../src/modules/statuses/statuses.schemas.ts'

export type Profile = Static<typeof ProfileSchema>
/** Who may sign up, whether mail is sent (`GET /v1/auth/settings`). */
export type AuthSettings = Static<typeof AuthSettingsSchema>
export type SessionView = Static<typeof SessionSchema>
export type Status = Static<typeof StatusSchema>
export type StatusListEntry = Static<typeof StatusListEntrySchema>

// a status's schedule (docs/api.md#schedules)
export type Schedule = Static<typeof ScheduleSchema>
export type ScheduleInput = Static<typeof ScheduleInputSchema>

// API keys, passkeys (docs/accounts.md#scoped-keys, #passkeys)
export type ApiKey = Static<typeof ApiKeySchema>
export type NewApiKey = Static<typeof NewApiKeySchema>
export type RotatedApiKey = Static<typeof RotatedApiKeySchema>
export type Scope = (typeof SCOPES)[number]
export type Passkey = Static<typeof PasskeySchema>
export type PasskeyRegistrationOptions = Static<typeof RegistrationOptionsSchema>
export type ChangedProfile = Static<typeof ChangedProfileSchema>

// the security log (docs/security.md#security-log)
export type SecurityEvent = Static<typeof SecurityEventSchema>
export type AuditEvent = Static<typeof AuditEventSchema>

// notifications (docs/notifications.md)
export type Channel = Static<typeof ChannelSchema>
export type NewChannel = Static<typeof NewChannelSchema>
export type DeliveryAttempt = Static<typeof DeliveryAttemptSchema>
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number]
export type { PushPayload }

// Sharing and people (docs/app.md#sharing-a-status, docs/app.md#people-and-invitations)

export type ShareLink = Static<typeof ShareLinkSchema>
export type NewShareLink = Static<typeof NewShareLinkSchema>
export type StatusUser = Static<typeof StatusUserSchema>
export type RoleInvitation = Static<typeof RoleInvitationSchema>
export type InvitationLink = Static<typeof InvitationLinkSchema>
export type CreatedInvitationLink = Static<typeof CreatedInvitationLinkSchema>
export type InvitationLinkPreview = Static<typeof InvitationLinkPreviewSchema>
export type Subscription = Static<typeof SubscriptionSchema>
export type SearchResult = Static<typeof SearchResultSchema>
export type HistoryEntry = Static<typeof HistoryEntrySchema>
export type HistoryDurations = Static<typeof HistoryDurationsSchema>
export type PaletteEntry = Static<typeof PaletteEntrySchema>
/** Staleness (docs/notifications.md#staleness): optional, so the app works with or without it. */
export type Staleness = { staleAfter?: number | null; stale?: boolean; staleSince?: string | null }

// boards (docs/app.md#boards-screens)
export type Board = Static<typeof BoardSchema>

// the operators' screens (docs/app.md#operators)
export type AdminUser = Static<typeof AdminUserSchema>
export type SignInLink = Static<typeof AdminSignInLinkSchema>
export type AdminInvitation = Static<typeof AdminInvitationSchema>
export type Instance = Static<typeof InstanceSchema>
