import type { Kysely } from 'kysely'
import type { ApiKey, DB, Db, User } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import {
  ApiError,
  insufficientScope,
  notFound,
  UserInputError,
  validationError,
} from '../../lib/errors.ts'
import { newApiKey, newId } from '../../lib/ids.ts'
import { singleLineTextProblem } from '../../lib/text.ts'
import { creationIso, nowIso, parseIsoInstant } from '../../lib/time.ts'
import { type Requester, recordBy } from '../audit/security-events.ts'
import type { KeyCache } from './key-cache.ts'
import type { KeyRevocationBus } from './key-revocations.ts'
import {
  countActiveApiKeys,
  deleteEndedApiKeys,
  findActiveKeyByHash,
  findApiKeyById,
  insertApiKey,
  isOperator,
  listApiKeys,
  retireActiveApiKey,
  revokeApiKey,
  revokeWorkingApiKeys,
  setApiKeyScopes,
} from './keys.repository.ts'
import {
  type CredentialLimits,
  DEFAULT_KEY_SCOPES,
  MAX_KEY_STATUSES,
  type Scope,
  scopesBeyond,
  scopesFor,
  scopesFromColumn,
  statusesBeyond,
  statusIdsFromColumn,
} from './scopes.ts'

/** Whatever this process holds open on a key's authority (the API's event streams). */
export interface KeySessions {
  /** Ends everything open with the key, at once. */
  endKey(keyId: string): void
}

/**
 * What the key services act on. The side effects of a key's end run here, not in a route,
 * so the API and the CLI behave the same: the API passes its cache and its streams; the CLI,
 * another process, has neither. Both announce the end on the revocations bus: on PostgreSQL
 * every instance hears it and drops the key at once; on SQLite a server sees a CLI's change
 * within AUTH_CACHE_SECONDS (docs/api.md#authentication).
 */
export interface KeyDeps {
  db: Kysely<DB>
  /** Keys recently authenticated: an ended key is forgotten at once. */
  cache?: KeyCache
  /** What is open on a key: a revoked key's is ended at once. */
  sessions?: KeySessions
  /** Where a key's end is announced to every instance (key-revocations.ts). */
  revocations?: KeyRevocationBus
  /** Which statuses a user may confine a key to (the statuses module answers it). */
  statusReach?: StatusReach
}

/**
 * Of the status ids given, those the user owns or holds a role on: what a key of theirs may be
 * confined to. The statuses module answers it (keys sit below it and do not read its tables).
 */
export type StatusReach = (
  db: Db,
  userId: string,
  statusIds: readonly string[],
) => Promise<ReadonlySet<string>>

/** A key as listed: never the secret, never its hash. */
export interface ApiKeyView {
  id: string
  prefix: string
  label: string | null
  createdAt: string
  expiresAt: string | null
  revokedAt: string | null
  replacedBy: string | null
  /** What the key may do (docs/accounts.md#scoped-keys). */
  scopes: Scope[]
  /** The statuses the key is confined to; null: every status its user may reach. */
  statusIds: string[] | null
}

export function toApiKeyView(key: ApiKey): ApiKeyView {
  const { scopes, statusIds } = limitsOf(key)
  return {
    id: key.id,
    prefix: key.prefix,
    label: key.label,
    createdAt: key.created_at,
    expiresAt: key.expires_at,
    revokedAt: key.revoked_at,
    replacedBy: key.replaced_by,
    scopes: [...scopes],
    statusIds: statusIds === null ? null : [...statusIds],
  }
}

/** What a stored key may do, and where; a key from before scopes (null) may do everything. */
export const limitsOf = (key: Pick<ApiKey, 'scopes' | 'status_ids'>): CredentialLimits => ({
  scopes: scopesFromColumn(key.scopes),
  statusIds: statusIdsFromColumn(key.status_ids),
})

/** A key option the services refuse: `field` names it, for the API's validation error. */
export class KeyInputError extends UserInputError {
  override name = 'KeyInputError'
  readonly field: string
  constructor(field: string, message: string) {
    super(message)
    this.field = field
  }
}

/** What a new key may do; what the API and the CLI ask for when making one. */
export interface KeyOptions {
  label?: string
  expiresAt?: string
  /**
   * Default: every scope the user may hold (the CLI's key); the API's default is `status:*`.
   * `admin` only for an operator (docs/operations.md#operators).
   */
  scopes?: readonly Scope[]
  /** The statuses the key is confined to; default none (not confined). */
  statusIds?: readonly string[]
  /** Checks `statusIds` (required with them). */
  statusReach?: StatusReach
  /** Who asks, for the security log (none: the command line). */
  requester?: Requester | undefined
}

/**
 * Throws KeyInputError unless every status id is one the user owns or holds a role on. One
 * message for a status that does not exist and one the user cannot reach, so nobody learns
 * of another's status by trying its id.
 */
async function assertReachable(
  db: Db,
  userId: string,
  statusIds: readonly string[],
  reach: StatusReach | undefined,
): Promise<void> {
  if (statusIds.length > MAX_KEY_STATUSES)
    throw new KeyInputError('statusIds', `must name at most ${MAX_KEY_STATUSES} statuses`)
  if (new Set(statusIds).size !== statusIds.length)
    throw new KeyInputError('statusIds', 'must not name a status twice')
  if (statusIds.length === 0) throw new KeyInputError('statusIds', 'must name a status')
  if (!reach) throw new Error('statusReach is needed to confine a key to statuses')
  const reachable = await reach(db, userId, statusIds)
  const unknown = statusIds.find((id) => !reachable.has(id))
  if (unknown !== undefined)
    throw new KeyInputError('statusIds', `${unknown} is not a status you own or have a role on`)
}

/**
 * Ended keys (revoked or expired) a user's key list keeps: the ones that ended last.
 * Each new key (created or by rotation) deletes the older ones, so the list stays bounded
 * (at most about MAX_ACTIVE_KEYS + MAX_ENDED_KEYS) however many keys a user makes and revokes.
 */
export const MAX_ENDED_KEYS = 100

/** A key label's lengths; its text rule is a status name's (docs/api.md#validation-rules). */
export const LABEL_LENGTHS = { minLength: 1, maxLength: 100 } as const

/** Creates a key for a user; the secret is in the result and nowhere else, ever. */
export async function createApiKey(
  db: Db,
  userId: string,
  options: KeyOptions = {},
): Promise<ApiKeyView & { key: string; userId: string }> {
  // note: the API's schema refuses such a label first; this holds it for the admin CLI too
  const labelProblem =
    options.label === undefined ? undefined : singleLineTextProblem(options.label, LABEL_LENGTHS)
  if (labelProblem !== undefined) throw new KeyInputError('label', `label ${labelProblem}`)
  if (options.statusIds !== undefined)
    await assertReachable(db, userId, options.statusIds, options.statusReach)
  let expiresAt: string | null = null
  if (options.expiresAt !== undefined) {
    const at = parseIsoInstant(options.expiresAt)
    if (at === null)
      throw new KeyInputError(
        'expiresAt',
        `expiry "${options.expiresAt}" is not an ISO 8601 date (e.g. 2030-12-31 or 2030-12-31T23:59:59Z)`,
      )
    if (at.getTime() <= Date.now())
      throw new KeyInputError('expiresAt', 'expiry must be in the future')
    expiresAt = at.toISOString()
  }
  const operator = await isOperator(db, userId)
  if (options.scopes?.includes('admin') && !operator)
    throw new KeyInputError('scopes', "only an operator's key may hold the scope admin")
  const scopes = options.scopes ?? scopesFor(operator)
  const { secret, prefix, hash } = newApiKey()
  const row = await insertApiKey(db, {
    id: newId(),
    user_id: userId,
    prefix,
    key_hash: hash,
    label: options.label ?? null,
    created_at: creationIso(),
    expires_at: expiresAt,
    revoked_at: null,
    replaced_by: null,
    scopes: JSON.stringify(scopes),
    status_ids: options.statusIds === undefined ? null : JSON.stringify(options.statusIds),
  })
  await deleteEndedApiKeys(db, userId, nowIso(), MAX_ENDED_KEYS)
  await recordBy(db, options.requester, 'keyCreated', userId, {
    keyId: row.id,
    label: row.label,
    scopes,
    ...(options.statusIds !== undefined && { statusIds: options.statusIds }),
  })
  return { ...toApiKeyView(row), key: secret, userId }
}

/** A user's keys, oldest first (never a secret). */
export async function apiKeysOf(db: Kysely<DB>, userId: string): Promise<ApiKeyView[]> {
  return (await listApiKeys(db, userId)).map(toApiKeyView)
}

/**
 * True when the caller is a key confined to statuses: it manages no key but itself
 * (docs/accounts.md#scoped-keys), so a leaked device key cannot revoke its owner's keys.
 */
const confinedCaller = (caller: KeyCaller): boolean => caller.limits?.statusIds != null

/** Whether the caller manages the key with this id: any of its user's, or a confined key only itself. */
const manages = (caller: KeyCaller, keyId: string): boolean =>
  !confinedCaller(caller) || caller.keyId === keyId

/**
 * GET /v1/user/api-keys: the caller's keys, oldest first; a key confined to statuses sees only
 * itself (the labels and scopes of the owner's other keys are none of a device's business).
 */
export async function apiKeysOfCaller(deps: KeyDeps, caller: KeyCaller): Promise<ApiKeyView[]> {
  const keys = await apiKeysOf(deps.db, caller.userId)
  return confinedCaller(caller) ? keys.filter((key) => key.id === caller.keyId) : keys
}

/** Revokes a key: it stops working, and what this process holds open on it ends. */
export async function revokeKey(deps: KeyDeps, keyId: string, by?: Requester): Promise<ApiKeyView> {
  const key = await deps.db.transaction().execute(async (tx) => {
    const revoked = await revokeApiKey(tx, keyId, nowIso())
    if (revoked)
      await recordBy(tx, by, 'keyRevoked', revoked.user_id, { keyId, label: revoked.label })
    return revoked
  })
  if (!key) throw new UserInputError(`no key ${keyId}`)
  deps.cache?.forgetKey(keyId)
  deps.sessions?.endKey(keyId)
  await deps.revocations?.publish({ keyId })
  return toApiKeyView(key)
}

/**
 * The user behind a key, known by its hash, when the key is known, unrevoked and unexpired
 * (the API's authentication, and an open event stream's key looked up again).
 */
export async function authenticateHash(
  db: Kysely<DB>,
  hash: string,
  cache?: KeyCache,
): Promise<AuthenticatedKey | null> {
  const cached = cache?.get(hash)
  if (cached) return { user: cached.user, keyId: cached.keyId, limits: cached.limits }
  const found = await findActiveKeyByHash(db, hash, nowIso())
  if (!found) return null
  const limits = limitsOf(found.key)
  cache?.set(hash, {
    user: found.user,
    keyId: found.key.id,
    limits,
    expiresAt: found.key.expires_at === null ? null : Date.parse(found.key.expires_at),
  })
  return { user: found.user, keyId: found.key.id, limits }
}

/** A working key as authentication finds it: its user, its id, what it may do and where. */
export interface AuthenticatedKey {
  user: User
  keyId: string
  limits: CredentialLimits
}

/**
 * Revokes one of the caller's own keys; someone else's key is "not found", like a missing one,
 * and so is any key but itself to a key confined to statuses.
 */
export async function revokeOwnKey(
  deps: KeyDeps,
  caller: KeyCaller,
  keyId: string,
): Promise<ApiKeyView> {
  const key = await findApiKeyById(deps.db, keyId)
  if (!key || key.user_id !== caller.userId || !manages(caller, keyId))
    throw notFound('API key not found')
  return revokeKey(deps, keyId, caller.requester)
}

/**
 * Working keys one user may hold through the API (OWASP API4/API6: no unbounded key minting).
 * note: the admin CLI is not bound by it; revoked and expired keys do not count.
 */
export const MAX_ACTIVE_KEYS = 100

const tooManyKeys = () =>
  new ApiError(
    409,
    'conflict',
    `You have ${MAX_ACTIVE_KEYS} working API keys, the most allowed; revoke one first`,
  )

/** The lock that counting a user's working keys and adding one take together. */
const keysLock = (userId: string) => `statusd:keys:${userId}`

/**
 * Who asks for a key operation through the API: the user, and the id and limits of the API key
 * they call with (absent for a session, which may make any key and manage every key).
 */
export interface KeyCaller {
  userId: string
  limits?: CredentialLimits
  /** The calling API key's id: the one key a key confined to statuses manages. */
  keyId?: string
  /** Who asks and from where, for the security log. */
  requester?: Requester
}

/**
 * The minting rule (docs/accounts.md#scoped-keys): a key never makes, or rotates into being, a
 * key with more scopes or statuses than its own. Throws 403 insufficientScope naming what is
 * beyond it. A session (no limits) may make any key.
 */
export function assertWithinCaller(
  caller: KeyCaller,
  wanted: { scopes: readonly Scope[]; statusIds: readonly string[] | null },
): void {
  const limits = caller.limits
  if (!limits) return
  const beyond = scopesBeyond(limits.scopes, wanted.scopes)
  if (beyond.length > 0)
    throw insufficientScope(
      `A key cannot make a key with scopes it does not have itself: ${beyond.join(', ')}`,
      'scopes',
      `beyond this API key's scopes: ${beyond.join(', ')}`,
    )
  const outside = statusesBeyond(limits.statusIds, wanted.statusIds)
  if (outside === 'all')
    throw insufficientScope(
      'This API key is confined to some statuses: a key it makes must name statusIds among them',
      'statusIds',
      "must be given, among this API key's statuses",
    )
  if (outside.length > 0)
    throw insufficientScope(
      `A key cannot make a key for statuses it is not confined to itself: ${outside.join(', ')}`,
      'statusIds',
      `beyond this API key's statuses: ${outside.join(', ')}`,
    )
}

/**
 * POST /v1/user/api-keys: a new key for the caller, within MAX_ACTIVE_KEYS and within what the
 * caller's own key may do; `status:*` unless scopes are named, not confined unless statusIds
 * are.
 */
export async function createOwnApiKey(
  deps: KeyDeps,
  caller: KeyCaller,
  options: {
    label?: string
    expiresAt?: string
    scopes?: readonly Scope[]
    statusIds?: readonly string[]
  } = {},
): Promise<ApiKeyView & { key: string; userId: string }> {
  const scopes = options.scopes ?? DEFAULT_KEY_SCOPES
  assertWithinCaller(caller, { scopes, statusIds: options.statusIds ?? null })
  const { userId } = caller
  try {
    return await deps.db.transaction().execute(async (tx) => {
      // the count and the insert in one turn per user, on every instance (PostgreSQL)
      await lockForTransaction(tx, keysLock(userId))
      if ((await countActiveApiKeys(tx, userId, nowIso())) >= MAX_ACTIVE_KEYS) throw tooManyKeys()
      return await createApiKey(tx, userId, {
        ...options,
        scopes,
        ...(deps.statusReach && { statusReach: deps.statusReach }),
        requester: caller.requester,
      })
    })
  } catch (err) {
    if (err instanceof KeyInputError)
      throw validationError([{ field: err.field, message: err.message }])
    throw err
  }
}

/**
 * POST /v1/user/api-keys/revoke-all: revokes every working key of the user but `keep` (one of
 * their working keys, else 404), ends what is open on each, and announces each end: one step
 * that locks out whoever holds a leaked key (docs/accounts.md#locking-an-attacker-out). A key
 * confined to statuses manages only itself: it revokes itself (unless it keeps itself), and
 * any other key named as `keep` is 404.
 */
export async function revokeAllKeys(
  deps: KeyDeps,
  caller: KeyCaller,
  keep?: string,
): Promise<{ revoked: number }> {
  const { userId } = caller
  const revoked = await deps.db.transaction().execute(async (tx) => {
    const now = nowIso()
    if (keep !== undefined) {
      const kept = await findApiKeyById(tx, keep)
      const working =
        kept !== undefined &&
        kept.user_id === userId &&
        manages(caller, keep) &&
        kept.revoked_at === null &&
        (kept.expires_at === null || kept.expires_at > now)
      if (!working) throw notFound('keep: no working API key of yours has this id')
    }
    if (confinedCaller(caller)) {
      const own = caller.keyId
      if (own === undefined || own === keep) return []
      const ended = await revokeApiKey(tx, own, now)
      return ended ? [own] : []
    }
    const ids = await revokeWorkingApiKeys(tx, userId, now, keep)
    if (ids.length > 0)
      await recordBy(tx, caller.requester, 'keysRevokedAll', userId, {
        count: ids.length,
        kept: keep ?? null,
      })
    return ids
  })
  await announceRevokedKeys(deps, revoked)
  return { revoked: revoked.length }
}

/**
 * Revokes every working key of the user inside the caller's transaction (an address proven
 * by a mailed link, docs/accounts.md#e-mail); the ids revoked, for `announceRevokedKeys`
 * once the transaction has committed.
 */
export const revokeKeysOfUserIn = (tx: Db, userId: string): Promise<string[]> =>
  revokeWorkingApiKeys(tx, userId, nowIso())

/**
 * Takes the scope `admin` from the user's unrevoked keys inside the caller's transaction: the
 * user is no longer an operator (docs/operations.md#operators), and a key may hold only what
 * its user may (a rotation copies the scopes). A key that held nothing else is revoked;
 * the ids revoked, for `announceRevokedKeys` once the transaction has committed.
 */
export async function dropAdminScopeIn(tx: Db, userId: string): Promise<string[]> {
  const revoked: string[] = []
  for (const key of await listApiKeys(tx, userId)) {
    if (key.revoked_at !== null || key.scopes === null) continue
    const scopes = scopesFromColumn(key.scopes)
    if (!scopes.includes('admin')) continue
    const left = scopes.filter((scope) => scope !== 'admin')
    if (left.length === 0) {
      await revokeApiKey(tx, key.id, nowIso())
      revoked.push(key.id)
    } else await setApiKeyScopes(tx, key.id, JSON.stringify(left))
  }
  return revoked
}

/**
 * What follows revoked keys' end, once it is committed: each is forgotten by this process's
 * cache, what is open on it ends, and every instance is told to do the same.
 */
export async function announceRevokedKeys(
  deps: Omit<KeyDeps, 'db' | 'statusReach'>,
  keyIds: readonly string[],
): Promise<void> {
  for (const keyId of keyIds) {
    deps.cache?.forgetKey(keyId)
    deps.sessions?.endKey(keyId)
    await deps.revocations?.publish({ keyId })
  }
}

/** The longest a rotated key keeps working beside its successor. */
export const MAX_GRACE_SECONDS = 24 * 60 * 60

/** The key to rotate exists but no longer works (revoked or expired), or was rotated already. */
export class KeyNotActiveError extends UserInputError {
  override name = 'KeyNotActiveError'
  /** The key's successor, when a rotation already replaced it. */
  replacedBy: string | null = null
}

/** A rotation's result: the new key (secret shown once) and the key it replaces. */
export type RotatedKey = ApiKeyView & { key: string; userId: string; replaced: ApiKeyView }

/**
 * Replaces a working key by a new one with the same label and expiry, in one transaction.
 * The old key is revoked at once, or with `graceSeconds` keeps working that long (never past
 * its own expiry), so clients can switch over. A key is replaced once: rotating a key that a
 * rotation already replaced (a race, or a retry during the grace period) is refused, since a
 * second successor would inherit the grace period's expiry as its own. Throws UserInputError
 * for a key that does not exist, KeyNotActiveError for one that no longer works or was
 * replaced.
 */
export async function rotateKey(
  deps: KeyDeps,
  keyId: string,
  options: { graceSeconds?: number; maxActive?: number; requester?: Requester | undefined } = {},
): Promise<RotatedKey> {
  const grace = options.graceSeconds ?? 0
  if (!Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_SECONDS)
    throw new UserInputError(`grace period must be 0 to ${MAX_GRACE_SECONDS} seconds`)
  const rotated = await deps.db.transaction().execute(async (tx): Promise<RotatedKey> => {
    const old = await findApiKeyById(tx, keyId)
    if (!old) throw new UserInputError(`no key ${keyId}`)
    const now = new Date()
    const until = new Date(now.getTime() + grace * 1000).toISOString()
    const id = newId()
    // note: the key's expiry before this rotation: the successor keeps it, not the grace end
    const expiresAt = old.expires_at
    const retired = await retireActiveApiKey(tx, keyId, id, now.toISOString(), until)
    if (!retired) {
      const current = await findApiKeyById(tx, keyId)
      if (current?.replaced_by) {
        const error = new KeyNotActiveError(
          `key ${keyId} was already rotated: it was replaced by ${current.replaced_by}; rotate that one`,
        )
        error.replacedBy = current.replaced_by
        throw error
      }
      throw new KeyNotActiveError(`key ${keyId} is revoked or expired; create a new one`)
    }
    // with a grace period the user briefly holds one key more: that one must fit the cap too
    if (grace > 0 && options.maxActive !== undefined) {
      await lockForTransaction(tx, keysLock(old.user_id))
      if ((await countActiveApiKeys(tx, old.user_id, now.toISOString())) >= options.maxActive)
        throw tooManyKeys()
    }
    const { secret, prefix, hash } = newApiKey()
    const row = await insertApiKey(tx, {
      id,
      user_id: old.user_id,
      prefix,
      key_hash: hash,
      label: old.label,
      created_at: creationIso(),
      // rotation replaces the secret, not the policy: an expiring key stays expiring
      expires_at: expiresAt,
      revoked_at: null,
      replaced_by: null,
      scopes: old.scopes,
      status_ids: old.status_ids,
    })
    await deleteEndedApiKeys(tx, old.user_id, now.toISOString(), MAX_ENDED_KEYS)
    await recordBy(tx, options.requester, 'keyRotated', old.user_id, {
      keyId: id,
      replacedKeyId: keyId,
      label: old.label,
      graceSeconds: grace,
    })
    return {
      ...toApiKeyView(row),
      key: secret,
      userId: old.user_id,
      replaced: toApiKeyView(retired),
    }
  })
  // the old key is revoked or now expires: a cached copy must not outlive that
  deps.cache?.forgetKey(keyId)
  // revoked at once: so is what is open on it (an expiring key's streams end with their
  // periodic check)
  if (rotated.replaced.revokedAt !== null) {
    deps.sessions?.endKey(keyId)
    await deps.revocations?.publish({ keyId })
  }
  return rotated
}

/**
 * Rotates one of the caller's own keys; someone else's key is "not found", like a missing one,
 * and so is any key but itself to a key confined to statuses.
 */
export async function rotateOwnKey(
  deps: KeyDeps,
  caller: KeyCaller,
  keyId: string,
  options: { graceSeconds?: number } = {},
): Promise<RotatedKey> {
  const key = await findApiKeyById(deps.db, keyId)
  if (!key || key.user_id !== caller.userId || !manages(caller, keyId))
    throw notFound('API key not found')
  // the successor keeps the key's scopes and statuses: a key may rotate only what it could make
  assertWithinCaller(caller, limitsOf(key))
  try {
    return await rotateKey(deps, keyId, {
      ...options,
      maxActive: MAX_ACTIVE_KEYS,
      requester: caller.requester,
    })
  } catch (err) {
    if (err instanceof KeyNotActiveError)
      throw new ApiError(
        409,
        'conflict',
        err.replacedBy !== null
          ? 'This API key was already rotated: rotate the key in its replacedBy instead'
          : 'This API key is revoked or expired; create a new one',
      )
    throw err
  }
}
