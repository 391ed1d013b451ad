import type { Db } from '../../db/database.ts'
import { decodePosition, type Page, toPage } from '../../lib/cursor.ts'
import {
  countRecentEvents,
  deleteSecurityEventsBefore,
  listSecurityEvents,
  type SecurityEventRow,
} from './audit.repository.ts'
import { recordSecurityEvent } from './security-events.ts'

// The security log (docs/security.md#security-log): read by each user for their own account,
// by operators for every account; kept for RETENTION_DAYS.

const DAY_MS = 24 * 60 * 60 * 1000
/** How long an event is kept and shown. */
export const RETENTION_DAYS = 90
/** A page when the caller names no `limit`, and the most one page holds. */
export const DEFAULT_PAGE = 50
export const MAX_PAGE = 200

/**
 * Failed sign-ins recorded per account (or, for addresses with no account, for all of them
 * together) in one FAILURE_WINDOW_MS; past it, further failures are refused by the sign-in
 * throttle as before but not recorded, so a flood of failures cannot grow the log without
 * bound (docs/security.md#security-log).
 */
export const FAILURES_RECORDED = { perAccount: 20, unknownAddresses: 100 } as const
export const FAILURE_WINDOW_MS = 60 * 60 * 1000

/** One event as its reader sees it. */
export interface SecurityEventView {
  id: string
  at: string
  kind: string
  /** Who acted; null for someone not signed in (a failed sign-in) or the command line. */
  actor: { id: string; name: string | null } | null
  ip: string | null
  userAgent: string | null
  detail: Record<string, unknown> | null
}

/** An event as an operator sees it: also the account it concerns. */
export interface AuditEventView extends SecurityEventView {
  user: { id: string; name: string | null } | null
}

const parseDetail = (text: string | null): Record<string, unknown> | null => {
  if (text === null) return null
  try {
    const parsed: unknown = JSON.parse(text)
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null
  } catch {
    return null
  }
}

const toView = (row: SecurityEventRow): SecurityEventView => ({
  id: row.id,
  at: row.at,
  kind: row.kind,
  actor: row.actor_id === null ? null : { id: row.actor_id, name: row.actor_name },
  ip: row.ip,
  userAgent: row.user_agent,
  detail: parseDetail(row.detail),
})

const toAuditView = (row: SecurityEventRow): AuditEventView => ({
  ...toView(row),
  user: row.user_id === null ? null : { id: row.user_id, name: row.user_name },
})

export interface EventPageRequest {
  limit?: number | undefined
  cursor?: string | undefined
}

const sinceOf = (now: number) => new Date(now - RETENTION_DAYS * DAY_MS).toISOString()

async function pageOf<T>(
  db: Db,
  filter: { userId?: string | null; kind?: string | undefined },
  page: EventPageRequest,
  now: number,
  map: (row: SecurityEventRow) => T,
): Promise<Page<T>> {
  const limit = page.limit ?? DEFAULT_PAGE
  const position = page.cursor === undefined ? undefined : decodePosition(page.cursor)
  const rows = await listSecurityEvents(db, {
    since: sinceOf(now),
    ...(filter.userId !== undefined && { userId: filter.userId }),
    ...(filter.kind !== undefined && { kind: filter.kind }),
    // the head position (`['', '']`) is where a list starts
    ...(position !== undefined &&
      position.createdAt !== '' && { before: { at: position.createdAt, id: position.id } }),
    limit: limit + 1,
  })
  return toPage(rows, limit, (row) => [row.at, row.id], map)
}

/** GET /v1/user/security-events: the caller's own events of the last RETENTION_DAYS, newest first. */
export const eventsOfUser = (
  db: Db,
  userId: string,
  page: EventPageRequest,
  now: number = Date.now(),
): Promise<Page<SecurityEventView>> => pageOf(db, { userId }, page, now, toView)

/** GET /v1/admin/audit: every account's events (and the operators' actions), newest first. */
export const auditEvents = (
  db: Db,
  filter: { userId?: string | undefined; kind?: string | undefined },
  page: EventPageRequest,
  now: number = Date.now(),
): Promise<Page<AuditEventView>> =>
  pageOf(
    db,
    { ...(filter.userId !== undefined && { userId: filter.userId }), kind: filter.kind },
    page,
    now,
    toAuditView,
  )

/**
 * Records a failed sign-in (a wrong password, an address with no account), unless this
 * account, or no account, had FAILURES_RECORDED failures recorded within FAILURE_WINDOW_MS.
 * The address typed is never stored: for an unknown one, the event has no account and says
 * only that the address matched none (docs/security.md#security-log).
 */
export async function recordFailedSignIn(
  db: Db,
  failure: {
    userId: string | null
    /** Who tried: null for someone not signed in (a sign-in), the user for a session's guess. */
    actorId?: string | null
    ip: string | null
    userAgent: string | null
    detail: Record<string, unknown>
  },
  now: number = Date.now(),
): Promise<boolean> {
  const cap =
    failure.userId === null ? FAILURES_RECORDED.unknownAddresses : FAILURES_RECORDED.perAccount
  const since = new Date(now - FAILURE_WINDOW_MS).toISOString()
  if ((await countRecentEvents(db, failure.userId, 'signInFailed', since)) >= cap) return false
  await recordSecurityEvent(
    db,
    {
      kind: 'signInFailed',
      userId: failure.userId,
      actorId: failure.actorId ?? null,
      ip: failure.ip,
      userAgent: failure.userAgent,
      detail: failure.detail,
    },
    new Date(now).toISOString(),
  )
  return true
}

/**
 * Deletes the events older than RETENTION_DAYS, `chunk` at a time (housekeeping,
 * src/server.ts); how many it deleted.
 */
export async function pruneSecurityEvents(
  db: Db,
  { now = Date.now(), chunk = 1000 }: { now?: number; chunk?: number } = {},
): Promise<number> {
  const before = sinceOf(now)
  let pruned = 0
  for (;;) {
    const deleted = await deleteSecurityEventsBefore(db, before, chunk)
    pruned += deleted
    if (deleted < chunk) return pruned
    // note: requests run between the chunks (docs/decisions/0016-bounded-work-on-large-tables.md)
    await new Promise((resolve) => setImmediate(resolve))
  }
}
