import type { Kysely } from 'kysely'
import type { ApiKey, DB, User } from '../../db/database.ts'
import { notFound } from '../../lib/errors.ts'
import { hashApiKey, newApiKey, newId } from '../../lib/ids.ts'
import { nowIso, parseIsoInstant } from '../../lib/time.ts'
import { UserInputError } from '../users/users.service.ts'
import type { KeyCache } from './key-cache.ts'
import {
  findActiveKeyByHash,
  findApiKeyById,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from './keys.repository.ts'

/** A key as listed: never the secret, never its hash. */
export interface ApiKeyView {
  id: string
  prefix: string
  label: string | null
  createdAt: string
  expiresAt: string | null
  revokedAt: string | null
}

export const toApiKeyView = (key: ApiKey): ApiKeyView => ({
  id: key.id,
  prefix: key.prefix,
  label: key.label,
  createdAt: key.created_at,
  expiresAt: key.expires_at,
  revokedAt: key.revoked_at,
})

/** Creates a key for a user; the secret is in the result and nowhere else, ever. */
export async function createApiKey(
  db: Kysely<DB>,
  userId: string,
  options: { label?: string; expiresAt?: string } = {},
): Promise<ApiKeyView & { key: string; userId: string }> {
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
    created_at: nowIso(),
    expires_at: expiresAt,
    revoked_at: null,
  })
  return { ...toApiKeyView(row), key: secret, userId }
}

export async function apiKeysOf(db: Kysely<DB>, userId: string): Promise<ApiKeyView[]> {
  return (await listApiKeys(db, userId)).map(toApiKeyView)
}

export async function revokeKey(db: Kysely<DB>, keyId: string): Promise<ApiKeyView> {
  const key = await revokeApiKey(db, keyId, nowIso())
  if (!key) throw new UserInputError(`no key ${keyId}`)
  return toApiKeyView(key)
}

/** The user behind a presented secret, when the key is known, unrevoked and unexpired. */
export async function authenticate(
  db: Kysely<DB>,
  secret: string,
  cache?: KeyCache,
): Promise<{ user: User; keyId: string } | null> {
  const hash = hashApiKey(secret)
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
  db: Kysely<DB>,
  userId: string,
  keyId: string,
): Promise<ApiKeyView> {
  const key = await findApiKeyById(db, keyId)
  if (!key || key.user_id !== userId) throw notFound('API key not found')
  return revokeKey(db, keyId)
}
