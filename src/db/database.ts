import type { Generated, Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely'

// Timestamps are RFC 3339 UTC text (`2026-11-22T10:00:00.000Z`) on every engine: they sort
// as text and no driver turns them into something else. Booleans are 0/1 integers for the
// same reason (better-sqlite3 cannot bind a JS boolean).

export interface UsersTable {
  id: string
  name: string
  email: string | null
  /** `email` folded for comparison (docs/accounts.md): unique; null when there is no e-mail. */
  email_key: string | null
  plan: string
  verified: number
  created_at: string
  /** The password's memory-hard hash (null: no password, e.g. a user the CLI made). */
  password_hash: string | null
  /** When the e-mail address was confirmed by a link mailed to it (null: never). */
  email_verified_at: string | null
  /** 1 for an operator (docs/operations.md#operators); the first user is one. */
  admin: Generated<number>
  /** When an operator disabled the account (null: enabled); its keys and sessions stop working. */
  disabled_at: string | null
  /** The language of the mails and notifications the user gets (null: none chosen, English). */
  locale: string | null
}

export interface ApiKeysTable {
  id: string
  user_id: string
  prefix: string
  key_hash: string
  label: string | null
  created_at: string
  expires_at: string | null
  revoked_at: string | null
  /** The key a rotation replaced this one with (null: never rotated). */
  replaced_by: string | null
  /** JSON array of scopes (docs/accounts.md#scoped-keys); null: every scope (older keys). */
  scopes: string | null
  /** JSON array of the status ids the key is confined to; null: not confined. */
  status_ids: string | null
}

export interface StatusesTable {
  id: string
  share_id: string
  owner_id: string
  status_key: string | null
  name: string
  type: string
  value: string | null
  access_type: string
  description: string
  color_no: number
  access_type_user_list: string
  access_type_history: string
  change_count: number
  created_at: string
  updated_at: string
  value_updated_at: string | null
  /** Moves by one on every write (value, setting, delete): numbers the status's events. */
  version: Generated<number>
  /** 1: a public status findable by search (docs/accounts.md#discovery). */
  listed: Generated<number>
  /**
   * The name folded for search (statuses.service.ts searchableName); null for a status not
   * written since search came (never listed).
   */
  name_search: Generated<string | null>
  /** JSON `[{value, colorNo}]`, ≤ 12 entries (docs/app.md#value-palette); null: no palette. */
  palette: string | null
  /** Seconds of silence after which the status reads stale (docs/notifications.md#staleness). */
  stale_after: number | null
  /** When the current silence turns stale: the last value write + stale_after (null: never). */
  stale_at: string | null
  /** When this silence's staleness was announced (null: not yet; every write clears it). */
  stale_notified_at: string | null
  /** When the current value ends (docs/api.md#values-that-end); null: it does not. */
  value_until: Generated<string | null>
  /** The value written when it ends. */
  value_after: Generated<string | null>
  /** The user who set the end: the timed worker writes the end as their change. */
  value_until_by: Generated<string | null>
}

export interface StatusHistoryTable {
  status_id: string
  /** The status's change_count after this update: orders history and numbers events. */
  change_no: number
  value: string
  at: string
  by_user_id: string
  /** The API key the value was written with; null: a session, the CLI, or before keys were noted. */
  by_key_id: string | null
  /** 'schedule': written by the timed worker (an end, a schedule's fire); null: an ordinary write. */
  via: Generated<string | null>
}

/**
 * A deleted status whose history the sweep is still removing, in batches; the row goes with
 * the last batch (modules/statuses/history-sweep.ts).
 */
export interface StatusDeletionsTable {
  status_id: string
  deleted_at: string
}

export interface IdempotencyKeysTable {
  user_id: string
  key: string
  fingerprint: string
  status_code: number
  location: string | null
  /** The response's ETag (null: it had none, or was stored before ETags were kept). */
  etag: string | null
  body: string
  created_at: string
}

export interface StatusRolesTable {
  status_id: string
  user_id: string
  /** `updater` or `subscriber`; the owner is statuses.owner_id, never a row here. */
  role: string
  created_at: string
}

/** A signed-in browser (docs/accounts.md#sessions): the cookie's token, stored hashed. */
export interface SessionsTable {
  id: string
  user_id: string
  token_hash: string
  created_at: string
  last_seen_at: string
  /** The absolute end (90 days after sign-in); idle expiry is last_seen_at + 14 days. */
  expires_at: string
  user_agent: string | null
  ip: string | null
  /** How the session began: `password`, `passkey`, `link`, `signup`, … */
  method: string
}

/** A WebAuthn credential registered by a user (docs/accounts.md#passkeys). */
export interface PasskeysTable {
  id: string
  user_id: string
  /** The credential id, base64url. */
  credential_id: string
  /** The COSE public key, base64url. */
  public_key: string
  counter: number
  /** JSON array of transports the authenticator named, if any. */
  transports: string | null
  name: string
  created_at: string
  last_used_at: string | null
}

/**
 * A one-time token: a sign-in link, an e-mail verification, a password reset or a passkey
 * challenge (`purpose`); `data` is JSON the purpose needs (the address to verify, the challenge).
 */
export interface AuthTokensTable {
  id: string
  token_hash: string
  purpose: string
  user_id: string | null
  data: string | null
  created_at: string
  expires_at: string
  used_at: string | null
}

/**
 * What happened to an account (docs/security.md#security-log): `user_id` the account
 * concerned, `actor_id` who acted (null: someone not signed in), `detail` JSON.
 */
export interface SecurityEventsTable {
  id: string
  at: string
  user_id: string | null
  actor_id: string | null
  kind: string
  ip: string | null
  user_agent: string | null
  detail: string | null
}

/** A role offered to a user, waiting for them to accept or decline (docs/accounts.md#invitations). */
export interface RoleInvitationsTable {
  id: string
  status_id: string
  user_id: string
  role: string
  invited_by: string
  created_at: string
}

/** A link that grants a role on a status to whoever opens it, up to `max_uses` times. */
export interface InvitationLinksTable {
  id: string
  status_id: string
  token_hash: string
  role: string
  /** Folded e-mail the link is meant for (null: anyone holding it). */
  email_key: string | null
  max_uses: number
  uses_left: number
  created_by: string
  created_at: string
  expires_at: string
  revoked_at: string | null
}

/** An invitation mail sent: what the per-address and per-inviter limits count. */
export interface InvitationMailsTable {
  id: string
  /** Folded address it went to. */
  to_key: string
  /** The user who made the link. */
  sender_id: string
  created_at: string
}

/** A private, expiring read-only link to one status (docs/accounts.md#private-share-links). */
export interface ShareLinksTable {
  id: string
  status_id: string
  token_hash: string
  created_by: string
  created_at: string
  expires_at: string
  revoked_at: string | null
}

/** A named set of statuses shown together (docs/app.md#boards). */
export interface BoardsTable {
  id: string
  share_id: string
  owner_id: string
  name: string
  access_type: string
  /** JSON array of status ids, in display order (≤ 100). */
  status_ids: string
  created_at: string
  updated_at: string
  version: Generated<number>
}

/** A status's schedule (docs/api.md#schedules). */
export interface StatusSchedulesTable {
  status_id: string
  /** The user whose change a fire is (the owner who set the schedule). */
  set_by: string
  /** The IANA time zone its entries are read in. */
  timezone: string
  /** JSON array of `{cron, value, colorNo?}`. */
  entries: string
  /** The next instant an entry fires; null when none is ahead. */
  next_fire_at: string | null
  created_at: string
  updated_at: string
}

/** Where a user is told about changes (docs/notifications.md#channels). */
export interface ChannelsTable {
  id: string
  user_id: string
  /** `webhook`, `email` or `webpush`. */
  type: string
  name: string
  /** JSON of the type's settings: `{url, format}`, `{address}` or `{subscription}`. */
  config: string
  /** The Standard Webhooks secret (`whsec_…`), for `standard` webhooks only. */
  secret: string | null
  enabled: Generated<number>
  /** When the channel was confirmed usable (e-mail: its link was opened); null: not yet. */
  verified_at: string | null
  /** When the current run of failed deliveries began (null: the last one succeeded). */
  failing_since: string | null
  /** Why the service disabled it (null: enabled, or disabled by its owner). */
  disabled_reason: string | null
  created_at: string
  updated_at: string
}

/** One user's rule for one status (docs/notifications.md#rules). */
export interface NotificationRulesTable {
  status_id: string
  user_id: string
  /** JSON: `"any"`, `{"changesTo": [...], "leaves": [...]}` (either or both) or `"stale"`. */
  condition: string
  /** JSON array of channel ids; null: every channel of the user. */
  channel_ids: string | null
  /** 1: changes made by the rule's own user are skipped (`byOthers`). */
  by_others: Generated<number>
  created_at: string
  updated_at: string
}

/** What a committed change must notify, written in its transaction (docs/notifications.md#delivery). */
export interface OutboxEventsTable {
  /** The stable event id receivers de-duplicate by. */
  id: string
  /** `status.changed`, `status.stale`, or a notice to one user/channel (`channel.test`, …). */
  type: string
  status_id: string | null
  user_id: string | null
  channel_id: string | null
  /** JSON of the event (for status events: the payload's `status` and `at`). */
  payload: string
  created_at: string
  /** When it was fanned out into deliveries (null: not yet). */
  done_at: string | null
  /**
   * PostgreSQL: the recording transaction's id (`xid8`, as text; set by the column's
   * default), the commit order live updates follow between instances (Database.outboxTail).
   * SQLite: null.
   */
  tx_id: Generated<string | null>
}

/** One event to one channel. */
export interface DeliveriesTable {
  id: string
  event_id: string
  channel_id: string
  /** `pending`, `delivered` or `failed` (gave up). */
  state: string
  attempts: Generated<number>
  next_attempt_at: string
  /** Until when an instance holds it to attempt it (null: nobody). */
  locked_until: string | null
  created_at: string
  delivered_at: string | null
}

/** One attempt to deliver (the channel's delivery log). */
export interface DeliveryAttemptsTable {
  id: string
  delivery_id: string
  channel_id: string
  event_id: string
  /** The event's type (`status.changed`, …). */
  event_type: string | null
  at: string
  status_code: number | null
  error: string | null
  duration_ms: number
}

/** Values the service makes once and keeps (the VAPID key pair). */
export interface ServiceSettingsTable {
  name: string
  value: string
  created_at: string
}

/**
 * Work one instance at a time does (the MQTT bridge): held by `holder` until `expires_at`,
 * unless renewed (docs/integrations.md#one-bridge-across-instances).
 */
export interface LeasesTable {
  name: string
  holder: string
  expires_at: string
}

export interface DB {
  users: UsersTable
  api_keys: ApiKeysTable
  statuses: StatusesTable
  status_history: StatusHistoryTable
  idempotency_keys: IdempotencyKeysTable
  status_roles: StatusRolesTable
  status_deletions: StatusDeletionsTable
  sessions: SessionsTable
  passkeys: PasskeysTable
  auth_tokens: AuthTokensTable
  security_events: SecurityEventsTable
  role_invitations: RoleInvitationsTable
  invitation_links: InvitationLinksTable
  invitation_mails: InvitationMailsTable
  share_links: ShareLinksTable
  status_schedules: StatusSchedulesTable
  boards: BoardsTable
  channels: ChannelsTable
  notification_rules: NotificationRulesTable
  outbox_events: OutboxEventsTable
  deliveries: DeliveriesTable
  delivery_attempts: DeliveryAttemptsTable
  service_settings: ServiceSettingsTable
  leases: LeasesTable
}

export type User = Selectable<UsersTable>
export type NewUser = Insertable<UsersTable>
export type UserUpdate = Updateable<UsersTable>
export type ApiKey = Selectable<ApiKeysTable>
export type NewApiKey = Insertable<ApiKeysTable>
export type StatusRow = Selectable<StatusesTable>
export type NewStatusRow = Insertable<StatusesTable>
export type StatusRowUpdate = Updateable<StatusesTable>
export type NewHistoryRow = Insertable<StatusHistoryTable>
export type IdempotencyRecord = Selectable<IdempotencyKeysTable>
export type RoleRow = Selectable<StatusRolesTable>

/** What every repository function takes first: the database or a transaction on it. */
export type Db = Kysely<DB> | Transaction<DB>
export type SessionRow = Selectable<SessionsTable>
export type NewSessionRow = Insertable<SessionsTable>
