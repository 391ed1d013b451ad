import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB, User } from '../db/database.ts'
import { notVerified, unauthorized } from '../lib/errors.ts'
import { hashApiKey } from '../lib/ids.ts'
import type { KeyCache } from '../modules/keys/key-cache.ts'
import { authenticateHash } from '../modules/keys/keys.service.ts'
import { type AuthLevel, authLevelOf } from '../modules/users/users.service.ts'

export const API_KEY_HEADER = 'service-api-key'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated user; set by the auth hook on every /v1 route. */
    user: User
    /** The API key the request was authenticated with: its id and hash (never the secret). */
    apiKey: { id: string; hash: string }
  }
  interface FastifyContextConfig {
    /** The level a route needs; `verified` unless it says otherwise (SPEC §3). */
    authLevel?: AuthLevel
  }
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i

/** The key a request presents: `service-api-key`, or `Authorization: Bearer`. Never the query string. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers[API_KEY_HEADER]
  if (typeof header === 'string' && header.length > 0) return header.trim()
  const authorization = request.headers.authorization
  if (typeof authorization === 'string') return BEARER.exec(authorization)?.[1]
  return undefined
}

// note: a real key is 44 characters; anything far longer is not worth hashing
const MAX_KEY_LENGTH = 256

/** onRequest hook: authenticates the caller and enforces the route's authorization level. */
export function authHook(db: Kysely<DB>, cache?: KeyCache) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const secret = presentedKey(request)
    if (secret === undefined) throw unauthorized()
    if (secret.length > MAX_KEY_LENGTH) throw unauthorized('API key is not valid')
    const hash = hashApiKey(secret)
    const found = await authenticateHash(db, hash, cache)
    if (!found) throw unauthorized('API key is not valid, revoked or expired')
    request.user = found.user
    request.apiKey = { id: found.keyId, hash }
    const needed = request.routeOptions.config.authLevel ?? 'verified'
    if (needed === 'verified' && authLevelOf(found.user) !== 'verified') throw notVerified()
  }
}
