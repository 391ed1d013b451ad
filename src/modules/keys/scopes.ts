/**
 * What a credential may do (docs/accounts.md#scoped-keys). A session may do everything its
 * user may; an API key only what its scopes allow.
 */
export const SCOPES = [
  /** Read statuses, their history, users and events. */
  'status:read',
  /** Set only the value, as an updater does. */
  'status:value',
  /** Set any field, create by key. */
  'status:write',
  /** Delete, access settings, roles, invitations, share links. */
  'status:manage',
  /** List, create, rotate and revoke API keys. */
  'keys',
  /** Profile, sessions, passkeys, channels. */
  'account',
] as const

export type Scope = (typeof SCOPES)[number]

/** Every scope: what a session, or a key made before scopes existed, may do. */
export const ALL_SCOPES: readonly Scope[] = SCOPES

/** A new key's scopes when none are asked for: `status:*`. */
export const DEFAULT_KEY_SCOPES: readonly Scope[] = [
  'status:read',
  'status:value',
  'status:write',
  'status:manage',
]
