import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB, User } from '../db/database.ts'
import { type Clock, systemClock } from '../lib/clock.ts'
import {
  csrfRejected,
  emailNotVerified,
  forbidden,
  insufficientScope,
  notVerified,
  unauthorized,
} from '../lib/errors.ts'
import { hashApiKey } from '../lib/ids.ts'
import { crossSite, isOwnOrigin, serviceOrigin } from '../lib/same-origin.ts'
import type { KeyCache } from '../modules/keys/key-cache.ts'
import { type AuthenticatedKey, authenticateHash } from '../modules/keys/keys.service.ts'
import { type Scope, satisfies } from '../modules/keys/scopes.ts'
import type { Caller } from '../modules/statuses/statuses.service.ts'
import { authenticateSession, SESSION_COOKIE } from '../modules/users/sessions.service.ts'
import { type AuthLevel, authLevelOf } from '../modules/users/users.service.ts'

export const API_KEY_HEADER = 'service-api-key'

/**
 * What a request was authenticated with (docs/accounts.md): an API key, with what its scopes
 * and status confinement allow, or a browser's session cookie. Ids and hashes, never a secret.
 */
export type Credential =
  | {
      kind: 'key'
      id: string
      hash: string
      scopes: readonly Scope[]
      /** The statuses the key is confined to (a device key); null: not confined. */
      statusIds: readonly string[] | null
    }
  | { kind: 'session'; id: string; hash: string }

/** Who is calling an authenticated route: the user, their plan, and the credential presented. */
export interface ApiCaller extends Caller {
  /** The user's display name. */
  name: string
  authLevel: AuthLevel
  /** Whether the user is an operator (docs/operations.md#operators). */
  admin: boolean
  credential: Credential
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling; set by `authenticate` on every route that takes a key. */
    caller: ApiCaller
  }
}

/** The one mapping from an authenticated credential to the caller the routes and services see. */
const callerOf = (user: User, credential: Credential): ApiCaller => ({
  userId: user.id,
  plan: user.plan,
  name: user.name,
  authLevel: authLevelOf(user),
  admin: Number(user.admin) === 1,
  credential,
  // what the services hold the caller to (docs/accounts.md#scoped-keys): a key's limits
  ...(credential.kind === 'key' && {
    limits: { scopes: credential.scopes, statusIds: credential.statusIds },
    keyId: credential.id,
  }),
  ...(credential.kind === 'session' && { session: true }),
})

/** The credential of a key authentication found: its id and hash, its scopes and statuses. */
const keyCredential = (found: AuthenticatedKey, hash: string): Credential => ({
  kind: 'key',
  id: found.keyId,
  hash,
  scopes: found.limits.scopes,
  statusIds: found.limits.statusIds,
})

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

// Requests that change nothing: a cookie may authenticate them from anywhere (the browser's
// same-origin policy keeps the answer from another origin's page).
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** What `authenticate` needs besides the database. */
export interface AuthOptions {
  /** Keys recently authenticated. */
  cache?: KeyCache | undefined
  /** Where sessions' expiry reads the time. */
  clock?: Clock | undefined
  /** The service's external URL (PUBLIC_URL): its origin is the one a cookie's writes must come from. */
  publicUrl?: string | null | undefined
  /**
   * Whether addresses are proven by mailed links (SMTP_URL is set): then a route declaring
   * `provenEmail` refuses an account whose address is neither confirmed nor vouched for.
   */
  emailVerification?: boolean | undefined
}

/**
 * An account that signed up with an address nobody proved or vouched for (docs/accounts.md#e-mail):
 * whoever made it may not be the address's owner. Vouched for: an inviter's link, the
 * operator (`statusd user set --verified`), or a service that sends no mail.
 */
const unprovenAddress = (user: User): boolean =>
  user.email !== null && user.email_verified_at === null && authLevelOf(user) !== 'verified'

/**
 * Authenticates the caller of every route that declares a level (`config.auth`), and
 * enforces it (docs/api.md#authentication); routes that declare none, or `none`, are left
 * alone. An API key, when one is presented; otherwise the session cookie
 * (docs/accounts.md#sessions), whose state-changing requests must come from the service's own
 * origin (else 403 `csrfRejected`). A route that declares `refuseCrossSite` (sign-up,
 * sign-in) refuses a request a browser says comes from another site, whoever calls.
 * Call on the root instance before any route is registered, after @fastify/cookie.
 */
export function authenticate(
  app: FastifyInstance,
  db: Kysely<DB>,
  options: AuthOptions = {},
): void {
  const { cache, clock = systemClock, publicUrl = null, emailVerification = false } = options
  const identify = async (request: FastifyRequest, needed: 'authenticated' | 'verified') => {
    let user: User
    const secret = presentedKey(request)
    if (secret === undefined) {
      // note: a request with a key and a cookie is the key's; the cookie is not even read
      const token = request.cookies?.[SESSION_COOKIE]
      if (token === undefined || token === '') throw unauthorized()
      // checked before the session is looked up: a forged request learns nothing, costs nothing
      if (
        !SAFE_METHODS.has(request.method) &&
        !isOwnOrigin(request, serviceOrigin(request, publicUrl))
      )
        throw csrfRejected()
      if (token.length > MAX_KEY_LENGTH) throw unauthorized('Session is not valid; sign in again')
      const hash = hashApiKey(token)
      const found = await authenticateSession(db, hash, clock)
      if (!found) throw unauthorized('Session has ended or is not valid; sign in again')
      user = found.user
      request.caller = callerOf(user, { kind: 'session', id: found.session.id, hash })
    } else {
      if (secret.length > MAX_KEY_LENGTH) throw unauthorized('API key is not valid')
      const hash = hashApiKey(secret)
      const found = await authenticateHash(db, hash, cache)
      if (!found) throw unauthorized('API key is not valid, revoked or expired')
      user = found.user
      request.caller = callerOf(user, keyCredential(found, hash))
    }
    // an operator disabled the account (docs/operations.md#operators): nothing of it works
    if (user.disabled_at !== null) throw unauthorized('This account is disabled')
    // note: before the level's check, so that a route both need names the cause to act on
    if (emailVerification && request.routeOptions.config.provenEmail && unprovenAddress(user))
      throw emailNotVerified()
    if (needed === 'verified' && request.caller.authLevel !== 'verified') throw notVerified()
  }
  // note: a plain hook calling done, not an async one: the anonymous routes (public views,
  // health) then pay no promise and no microtask hop on every request; only a route that
  // needs a credential waits for its lookup
  app.addHook('onRequest', (request, _reply, done) => {
    const config = request.routeOptions.config
    if (config.refuseCrossSite && crossSite(request, serviceOrigin(request, publicUrl)))
      throw csrfRejected()
    const needed = config.auth
    if (needed === undefined || needed === 'none') return done()
    identify(request, needed).then(() => done(), done)
  })
}

/**
 * Holds an API key to the scope its route declares (`config.scope`,
 * docs/accounts.md#scoped-keys): a key without it gets 403 insufficientScope naming it. A
 * session holds every scope. A route only operators may call (`config.admin`) refuses
 * anyone else with 403 forbidden (docs/operations.md#operators). Runs after `authenticate`
 * (call it right after); what a write may change field by field, and which statuses a key
 * reaches, the services judge.
 */
export function enforceScopes(app: FastifyInstance): void {
  // note: synchronous work, so a plain hook (no promise per request)
  app.addHook('onRequest', (request, _reply, done) => {
    const { scope: needed, admin } = request.routeOptions.config
    if (request.caller !== undefined) {
      if (admin && !request.caller.admin) throw forbidden('Only an operator may do this')
      if (needed !== undefined) assertKeyHolds(request.caller.credential, needed)
    }
    done()
  })
}

/** Throws 403 insufficientScope unless the credential holds `needed` (a session holds all). */
export function assertKeyHolds(credential: Credential, needed: Scope): void {
  if (credential.kind !== 'key' || satisfies(credential.scopes, needed)) return
  throw insufficientScope(
    `This API key lacks the scope ${needed}`,
    'scopes',
    `must include ${needed}`,
  )
}

/**
 * Every route of this scope takes an API key: `verified` unless the route declares
 * `authenticated`. An anonymous route (`auth: 'none'`) registered here is a mistake, refused
 * at start.
 */
export function requireApiKey(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    const auth = route.config?.auth ?? 'verified'
    if (auth === 'none')
      throw new Error(`${route.method} ${route.url} is anonymous, in the scope that takes a key`)
    route.config = { ...route.config, auth }
  })
}
