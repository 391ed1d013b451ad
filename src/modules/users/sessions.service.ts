import type { Kysely } from 'kysely'
import type { DB, SessionRow, User } from '../../db/database.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { newId, newToken } from '../../lib/ids.ts'
import { type Requester, recordBy, recordSecurityEvent } from '../audit/security-events.ts'
import {
  deleteSession,
  deleteSessionsOf,
  findSessionByHash,
  insertSession,
  listSessions,
  pruneSessions,
  touchSession,
} from './sessions.repository.ts'
import { assertEnabled, userById } from './users.service.ts'

// Sessions (docs/accounts.md#sessions): a signed-in browser holds a random token in the
// `statusd_session` cookie; the server keeps only its SHA-256.

/** The cookie a session's token travels in. */
export const SESSION_COOKIE = 'statusd_session'

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE
/** A session not used for this long has ended. */
export const SESSION_IDLE_MS = 14 * DAY
/** A session ends this long after sign-in, however much it is used. */
export const SESSION_ABSOLUTE_MS = 90 * DAY
/**
 * How stale `last_seen_at` may be before a request writes it again: one write a minute per
 * session at most, not one per request; the idle expiry is that much less exact.
 */
export const SESSION_TOUCH_MS = MINUTE
/** Live sessions one user keeps; signing in past it ends the least recently used. */
export const MAX_SESSIONS_PER_USER = 100

/** How a session began. */
export type SessionMethod = 'password' | 'signup' | 'passkey' | 'link' | (string & {})

/** A session as its user sees it: never the token, never its hash. */
export interface SessionView {
  id: string
  createdAt: string
  lastSeenAt: string
  /** When it ends unless used again: the earlier of its idle end and its absolute end. */
  expiresAt: string
  method: string
  userAgent: string | null
  ip: string | null
}

const iso = (ms: number) => new Date(ms).toISOString()

const endOf = (row: SessionRow): number =>
  Math.min(Date.parse(row.expires_at), Date.parse(row.last_seen_at) + SESSION_IDLE_MS)

export const toSessionView = (row: SessionRow): SessionView => ({
  id: row.id,
  createdAt: row.created_at,
  lastSeenAt: row.last_seen_at,
  expiresAt: iso(endOf(row)),
  method: row.method,
  userAgent: row.user_agent,
  ip: row.ip,
})

// note: the user agent is whatever the client sent: kept short, shown back only to its user
const MAX_USER_AGENT = 256

/**
 * Starts a session for a user (sign-up, sign-in by password, passkey or link): a new token
 * every time, never one the client brought (session fixation). Ended sessions of the user are
 * deleted on the way, and past MAX_SESSIONS_PER_USER the least recently used. The token is in
 * the result and nowhere else.
 */
export async function startSession(
  db: Kysely<DB>,
  input: {
    userId: string
    method: SessionMethod
    userAgent?: string | undefined
    ip?: string | undefined
    clock?: Clock
  },
): Promise<{ token: string; session: SessionView }> {
  const now = (input.clock ?? systemClock).now()
  const { token, hash } = newToken('sds_')
  const row = await db.transaction().execute(async (tx) => {
    // a disabled account signs in by no method (docs/operations.md#operators)
    assertEnabled(await userById(tx, input.userId))
    await pruneSessions(
      tx,
      input.userId,
      iso(now),
      iso(now - SESSION_IDLE_MS),
      MAX_SESSIONS_PER_USER - 1,
    )
    const session = await insertSession(tx, {
      id: newId(),
      user_id: input.userId,
      token_hash: hash,
      created_at: iso(now),
      last_seen_at: iso(now),
      expires_at: iso(now + SESSION_ABSOLUTE_MS),
      user_agent: input.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
      ip: input.ip ?? null,
      method: input.method,
    })
    // every sign-in, whatever its method, is in the security log (docs/security.md#security-log)
    await recordSecurityEvent(
      tx,
      {
        kind: 'signIn',
        userId: input.userId,
        actorId: input.userId,
        ip: session.ip,
        userAgent: input.userAgent,
        detail: { method: input.method, sessionId: session.id },
      },
      iso(now),
    )
    return session
  })
  return { token, session: toSessionView(row) }
}

/**
 * The user and session behind a session token's hash, while the session lasts (the cookie's
 * authentication, and an open event stream's session looked up again). Marks the session seen,
 * at most once a SESSION_TOUCH_MS.
 */
export async function authenticateSession(
  db: Kysely<DB>,
  hash: string,
  clock: Clock = systemClock,
): Promise<{ user: User; session: SessionRow } | null> {
  const session = await findSessionByHash(db, hash)
  if (!session) return null
  const now = clock.now()
  if (endOf(session) <= now) return null
  const user = await userById(db, session.user_id)
  if (!user) return null
  if (now - Date.parse(session.last_seen_at) >= SESSION_TOUCH_MS) {
    await touchSession(db, session.id, iso(now), iso(now - SESSION_TOUCH_MS + 1))
    session.last_seen_at = iso(now)
  }
  return { user, session }
}

/** Whatever this process holds open on a session's authority (the API's event streams). */
export interface SessionHolders {
  /** Ends everything open with these sessions, at once. */
  endSessions(sessionIds: readonly string[]): void
  /**
   * A user's standing changed (no longer verified): whatever is cached or open on their
   * authority is judged again, at once.
   */
  userChanged?(userId: string): void
}

/** What ending sessions acts on: the database, and what is open on them in this process. */
export interface SessionDeps {
  db: Kysely<DB>
  holders?: SessionHolders
  clock?: Clock
}

/** A user's live sessions, the most recently used first; `current` marks the caller's. */
export async function sessionsOf(
  deps: SessionDeps,
  userId: string,
  currentId: string | null,
): Promise<(SessionView & { current: boolean })[]> {
  const now = (deps.clock ?? systemClock).now()
  return (await listSessions(deps.db, userId))
    .filter((row) => endOf(row) > now)
    .map((row) => ({ ...toSessionView(row), current: row.id === currentId }))
}

const ended = (deps: SessionDeps, ids: string[]): number => {
  if (ids.length > 0) deps.holders?.endSessions(ids)
  return ids.length
}

/**
 * Ends one of the user's sessions (sign-out, or revoked from the list); another's is not found.
 * `record`: what the security log says of it (`signOut`, `sessionRevoked`), made by whom.
 */
export async function endSession(
  deps: SessionDeps,
  userId: string,
  id: string,
  record?: { kind: 'signOut' | 'sessionRevoked'; by: Requester },
): Promise<void> {
  const deleted = await deps.db.transaction().execute(async (tx) => {
    const ids = await deleteSession(tx, userId, id)
    if (ids.length > 0 && record)
      await recordBy(tx, record.by, record.kind, userId, { sessionId: id })
    return ids
  })
  if (ended(deps, deleted) === 0) throw notFound('Session not found')
}

/**
 * Ends every session of a user but `keep` (null: all of them, as a password reset does);
 * how many ended.
 */
export async function endSessionsOf(
  deps: SessionDeps,
  userId: string,
  keep: string | null,
  by?: Requester,
): Promise<number> {
  const deleted = by
    ? await deps.db.transaction().execute(async (tx) => {
        const ids = await deleteSessionsOf(tx, userId, keep)
        if (ids.length > 0)
          await recordBy(tx, by, 'sessionRevoked', userId, { count: ids.length, kept: keep })
        return ids
      })
    : await deleteSessionsOf(deps.db, userId, keep)
  return ended(deps, deleted)
}
