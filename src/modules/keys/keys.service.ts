import type { Kysely } from 'kysely'
import type { ApiKey, DB, User } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { ApiError, notFound, UserInputError, validationError } from '../../lib/errors.ts'
import { newApiKey, newId } from '../../lib/ids.ts'
import { singleLineTextProblem } from '../../lib/text.ts'
import { creationIso, nowIso, parseIsoInstant } from '../../lib/time.ts'
import type { KeyCache } from './key-cache.ts'
import type { KeyRevocationBus } from './key-revocations.ts'
import {
  countActiveApiKeys,
  deleteEndedApiKeys,
  findActiveKeyByHash,
  findApiKeyById,
  insertApiKey,
  listApiKeys,
  retireActiveApiKey,
  revokeApiKey,
} from './keys.repository.ts'

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
}

/** A key as listed: never the secret, never its hash. */
export interface ApiKeyView {
  id: string
  prefix: string
  label: string | null
  createdAt: string
  expiresAt: string | null
  revokedAt: string | null
  replacedBy: string | null
}

export const toApiKeyView = (key: ApiKey): ApiKeyView => ({
  id: key.id,
  prefix: key.prefix,
  label: key.label,
  createdAt: key.created_at,
  expiresAt: key.expires_at,
  revokedAt: key.revoked_at,
  replacedBy: key.replaced_by,
})

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
  db: Kysely<DB>,
  userId: string,
  options: { label?: string; expiresAt?: string } = {},
): Promise<ApiKeyView & { key: string; userId: string }> {
  // note: the API's schema refuses such a label first; this holds it for the admin CLI too
  const labelProblem =
    options.label === undefined ? undefined : singleLineTextProblem(options.label, LABEL_LENGTHS)
  if (labelProblem !== undefined) throw new UserInputError(`label ${labelProblem}`)
  let expiresAt: string | null = null
  if (options.expiresAt !== undefined) {
    const at = parseIsoInstant(options.expiresAt)
    if (at === null)
      throw new UserInputError(
        `expiry "${options.expiresAt}" is not an ISO 8601 date (e.g. 2030-12-31 or 2030-12-31T23:59:59Z)`,
      )
    if (at.getTime() <= Date.now()) throw new UserInputError('expiry must be in the future')
    expiresAt = at.toISOString()
  }
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
    scopes: null,
    status_ids: null,
  })
  await deleteEndedApiKeys(db, userId, nowIso(), MAX_ENDED_KEYS)
  return { ...toApiKeyView(row), key: secret, userId }
}

/** A user's keys, oldest first (never a secret). */
export async function apiKeysOf(db: Kysely<DB>, userId: string): Promise<ApiKeyView[]> {
  return (await listApiKeys(db, userId)).map(toApiKeyView)
}

/** Revokes a key: it stops working, and what this process holds open on it ends. */
export async function revokeKey(deps: KeyDeps, keyId: string): Promise<ApiKeyView> {
  const key = await revokeApiKey(deps.db, keyId, nowIso())
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
): Promise<{ user: User; keyId: string } | null> {
  const cached = cache?.get(hash)
  if (cached) return { user: cached.user, keyId: cached.keyId }
  const found = await findActiveKeyByHash(db, hash, nowIso())
  if (!found) return null
  cache?.set(hash, {
    user: found.user,
    keyId: found.key.id,
    expiresAt: found.key.expires_at === null ? null : Date.parse(found.key.expires_at),
  })
  return { user: found.user, keyId: found.key.id }
}

/** Revokes one of the user's own keys; someone else's key is "not found", like a missing one. */
export async function revokeOwnKey(
  deps: KeyDeps,
  userId: string,
  keyId: string,
): Promise<ApiKeyView> {
  const key = await findApiKeyById(deps.db, keyId)
  if (!key || key.user_id !== userId) throw notFound('API key not found')
  return revokeKey(deps, keyId)
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

/** POST /v1/user/api-keys: a new key for the caller, within MAX_ACTIVE_KEYS. */
export async function createOwnApiKey(
  db: Kysely<DB>,
  userId: string,
  options: { label?: string; expiresAt?: string } = {},
): Promise<ApiKeyView & { key: string; userId: string }> {
  try {
    return await db.transaction().execute(async (tx) => {
      // the count and the insert in one turn per user, on every instance (PostgreSQL)
      await lockForTransaction(tx, keysLock(userId))
      if ((await countActiveApiKeys(tx, userId, nowIso())) >= MAX_ACTIVE_KEYS) throw tooManyKeys()
      return await createApiKey(tx, userId, options)
    })
  } catch (err) {
    // the only input createApiKey judges is the expiry
    if (err instanceof UserInputError)
      throw validationError([{ field: 'expiresAt', message: err.message }])
    throw err
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
  options: { graceSeconds?: number; maxActive?: number } = {},
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

/** Rotates one of the caller's own keys; someone else's key is "not found", like a missing one. */
export async function rotateOwnKey(
  deps: KeyDeps,
  userId: string,
  keyId: string,
  options: { graceSeconds?: number } = {},
): Promise<RotatedKey> {
  const key = await findApiKeyById(deps.db, keyId)
  if (!key || key.user_id !== userId) throw notFound('API key not found')
  try {
    return await rotateKey(deps, keyId, { ...options, maxActive: MAX_ACTIVE_KEYS })
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
