/**
 * What a credential may do (docs/accounts.md#scoped-keys). A session may do everything its
 * user may (every scope, as a key made before scopes existed); an API key only what its
 * scopes allow.
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
  /** The operators' API, `/v1/admin/…`; only an operator's key may hold it (docs/operations.md#operators). */
  'admin',
] as const

export type Scope = (typeof SCOPES)[number]

/** Every scope but `admin`: what a user who is not an operator may hold. */
export const USER_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== 'admin')

/** Every scope a user may hold: `admin` only for an operator (docs/operations.md#operators). */
export const scopesFor = (operator: boolean): readonly Scope[] => (operator ? SCOPES : USER_SCOPES)

/** A new key's scopes when none are asked for: `status:*`. */
export const DEFAULT_KEY_SCOPES: readonly Scope[] = [
  'status:read',
  'status:value',
  'status:write',
  'status:manage',
]

/** What `scopes` may name when a key is made: a scope, or `status:*` for the four status scopes. */
export const SCOPE_NAMES = [...SCOPES, 'status:*'] as const

/** Keys a user may confine one key to, at most (docs/accounts.md#scoped-keys). */
export const MAX_KEY_STATUSES = 100

/**
 * What a credential is limited to (docs/accounts.md#scoped-keys): an API key's scopes, and
 * the statuses it is confined to (null: not confined). A session has none: it may do all its
 * user may.
 */
export interface CredentialLimits {
  scopes: readonly Scope[]
  statusIds: readonly string[] | null
}

/** The scopes named, `status:*` expanded, each once, in SCOPES order. */
export function expandScopes(names: readonly string[]): Scope[] {
  const wanted = new Set<string>(
    names.flatMap((n): readonly string[] => (n === 'status:*' ? DEFAULT_KEY_SCOPES : [n])),
  )
  return SCOPES.filter((s) => wanted.has(s))
}

/**
 * True when scopes held allow what `needed` allows. `status:write` (any field) includes
 * `status:value` (the value alone); no other scope includes another.
 */
export const satisfies = (held: readonly Scope[], needed: Scope): boolean =>
  held.includes(needed) || (needed === 'status:value' && held.includes('status:write'))

/** The scopes of `wanted` that `held` does not allow, in SCOPES order. */
export const scopesBeyond = (held: readonly Scope[], wanted: readonly Scope[]): Scope[] =>
  SCOPES.filter((s) => wanted.includes(s) && !satisfies(held, s))

/** The statuses of `wanted` a key confined to `held` may not reach (null: unconfined). */
export function statusesBeyond(
  held: readonly string[] | null,
  wanted: readonly string[] | null,
): string[] | 'all' {
  if (held === null) return []
  if (wanted === null) return 'all'
  return wanted.filter((id) => !held.includes(id))
}

/**
 * A key's stored scopes (`api_keys.scopes`, JSON): null, a key from before scopes, has every
 * scope. Anything unreadable or unknown grants nothing: a damaged row fails closed.
 */
export function scopesFromColumn(text: string | null): readonly Scope[] {
  // note: `admin` came after scopes did; a key made before them never held it
  if (text === null) return USER_SCOPES
  try {
    const value: unknown = JSON.parse(text)
    if (!Array.isArray(value)) return []
    return SCOPES.filter((s) => value.includes(s))
  } catch {
    return []
  }
}

/**
 * A key's stored confinement (`api_keys.status_ids`, JSON): null, not confined. Anything
 * unreadable confines the key to nothing: a damaged row fails closed.
 */
export function statusIdsFromColumn(text: string | null): readonly string[] | null {
  if (text === null) return null
  try {
    const value: unknown = JSON.parse(text)
    return Array.isArray(value) ? value.filter((id): id is string => typeof id === 'string') : []
  } catch {
    return []
  }
}
