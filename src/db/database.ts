import type { Generated, Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely'

// Timestamps are RFC 3339 UTC text (`2026-11-22T10:00:00.000Z`) on every engine: they sort
// as text and no driver turns them into something else. Booleans are 0/1 integers for the
// same reason (better-sqlite3 cannot bind a JS boolean).

export interface UsersTable {
  id: string
  name: string
  email: string | null
  plan: string
  verified: number
  created_at: string
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
}

export interface StatusHistoryTable {
  status_id: string
  /** The status's change_count after this update: orders history and numbers events. */
  change_no: number
  value: string
  at: string
  by_user_id: string
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

export interface DB {
  users: UsersTable
  api_keys: ApiKeysTable
  statuses: StatusesTable
  status_history: StatusHistoryTable
  idempotency_keys: IdempotencyKeysTable
  status_roles: StatusRolesTable
  status_deletions: StatusDeletionsTable
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
