import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { ApiError, notFound } from '../../lib/errors.ts'
import { hashApiKey, newId, newToken } from '../../lib/ids.ts'
import {
  countAuthTokensSince,
  deleteExpiredAuthTokens,
  findAuthTokenByHash,
  insertAuthToken,
  useAllAuthTokens,
  useAuthToken,
} from './auth-tokens.repository.ts'

// One-time tokens (docs/accounts.md#e-mail): a sign-in link, an e-mail verification, a
// password reset, or anything else that must work once and not for long (a passkey
// challenge). The token (`sdl_` + ≈256 random bits) is handed out once; only its SHA-256
// is stored, so a copy of the database holds no usable link.

/** What a token is for; a token of one purpose is unknown to every other. */
export type AuthTokenPurpose = 'sign-in-link' | 'verify-email' | 'password-reset' | (string & {})

/** The state a token is in, for a page that tells the person before they act. */
export type AuthTokenState = 'valid' | 'used' | 'expired' | 'unknown'

export interface IssuedAuthToken {
  id: string
  /** The secret, to put in a link; never stored. */
  token: string
  expiresAt: string
}

export interface UsedAuthToken {
  id: string
  userId: string | null
  /** The JSON data the token was issued with (null when none). */
  data: unknown
  createdAt: string
}

/**
 * A used or expired token stays this long before cleanup deletes it, so that its link still
 * answers "used or expired" (410) rather than "unknown" (404) for a day, and the per-address
 * counts of recent mails (`recentAuthTokens`) see a day back.
 */
export const KEEP_AFTER_EXPIRY_MS = 24 * 60 * 60 * 1000
/** At most this many expired tokens are deleted per issue, so cleanup never makes one slow. */
const CLEANUP_BATCH = 100

const MAX_TOKEN_LENGTH = 100

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * A new one-time token for `purpose`, valid `lifetimeMs` from the clock's now. Deletes a
 * bounded batch of long-expired tokens first: tokens are issued a few times an hour, so
 * the table stays small without a sweeper.
 */
export async function issueAuthToken(
  db: Db,
  clock: Clock,
  input: { purpose: AuthTokenPurpose; userId: string | null; data?: unknown; lifetimeMs: number },
): Promise<IssuedAuthToken> {
  const now = clock.now()
  await deleteExpiredAuthTokens(db, iso(now - KEEP_AFTER_EXPIRY_MS), CLEANUP_BATCH)
  const { token, hash } = newToken('sdl_')
  const row = await insertAuthToken(db, {
    id: newId(),
    token_hash: hash,
    purpose: input.purpose,
    user_id: input.userId,
    data: input.data === undefined ? null : JSON.stringify(input.data),
    created_at: iso(now),
    expires_at: iso(now + input.lifetimeMs),
    used_at: null,
  })
  return { id: row.id, token, expiresAt: row.expires_at }
}

const hashOf = (token: string): string | null =>
  token.length > 0 && token.length <= MAX_TOKEN_LENGTH ? hashApiKey(token) : null

/** What state the token is in, without using it (the page a link opens shows this). */
export async function inspectAuthToken(
  db: Db,
  clock: Clock,
  token: string,
  purpose: AuthTokenPurpose,
): Promise<AuthTokenState> {
  const hash = hashOf(token)
  const row = hash === null ? undefined : await findAuthTokenByHash(db, hash)
  if (!row || row.purpose !== purpose) return 'unknown'
  if (row.used_at !== null) return 'used'
  if (row.expires_at <= iso(clock.now())) return 'expired'
  return 'valid'
}

/**
 * The user a token that can still be used was issued for (null: none), without using it;
 * 404 for a token never issued (or for another purpose), 410 for one used or expired.
 */
export async function openAuthTokenUser(
  db: Db,
  clock: Clock,
  token: string,
  purpose: AuthTokenPurpose,
): Promise<string | null> {
  const hash = hashOf(token)
  const row = hash === null ? undefined : await findAuthTokenByHash(db, hash)
  if (!row || row.purpose !== purpose) throw linkUnknown()
  if (row.used_at !== null || row.expires_at <= iso(clock.now())) throw linkGone()
  return row.user_id
}

/** 410 for a link that was real but is used or expired; 404 for one that never was. */
export const linkGone = () =>
  new ApiError(410, 'gone', 'This link was already used or has expired; ask for a new one')
export const linkUnknown = () => notFound('This link is not valid')

/**
 * Uses the token, once: marks it used and returns what it was issued with, or throws 404
 * (never issued, or for another purpose) or 410 (used or expired). The check and the marking
 * are one conditional UPDATE, so of two concurrent uses exactly one succeeds. Run it in the
 * transaction of the work the token allows, so that work failing leaves the token unused.
 */
export async function consumeAuthToken(
  db: Db,
  clock: Clock,
  token: string,
  purpose: AuthTokenPurpose,
): Promise<UsedAuthToken> {
  const hash = hashOf(token)
  if (hash === null) throw linkUnknown()
  const row = await useAuthToken(db, hash, purpose, iso(clock.now()))
  if (!row) {
    const state = await inspectAuthToken(db, clock, token, purpose)
    throw state === 'unknown' ? linkUnknown() : linkGone()
  }
  return {
    id: row.id,
    userId: row.user_id,
    data: row.data === null ? null : JSON.parse(row.data),
    createdAt: row.created_at,
  }
}

/** Ends every unused token of this purpose the user holds (other reset links after a reset). */
export const revokeAuthTokens = (
  db: Db,
  clock: Clock,
  userId: string,
  purpose: AuthTokenPurpose,
): Promise<void> => useAllAuthTokens(db, userId, purpose, iso(clock.now()))

/** How many tokens of this purpose the user was issued in the last `windowMs` (≤ one day). */
export const recentAuthTokens = (
  db: Db,
  clock: Clock,
  userId: string,
  purpose: AuthTokenPurpose,
  windowMs: number,
): Promise<number> => countAuthTokensSince(db, userId, purpose, iso(clock.now() - windowMs))
