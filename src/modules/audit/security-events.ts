import type { FastifyRequest } from 'fastify'
import type { Db } from '../../db/database.ts'
import { newId } from '../../lib/ids.ts'
import type { SecurityEventKind } from './kinds.ts'

/**
 * What the security log records (docs/security.md#security-log): what happened to an account,
 * who did it, from where.
 */
export interface SecurityEvent {
  /** What happened (SECURITY_EVENT_KINDS), e.g. `signIn`, `keyCreated`, `admin.userDisabled`. */
  kind: string
  /** The account concerned; null when no account is (a sign-in to an unknown address). */
  userId: string | null
  /** Who acted: the user, an operator; null for someone not signed in, or the command line. */
  actorId: string | null
  ip?: string | null | undefined
  userAgent?: string | null | undefined
  /** What else a reader needs (a key's label, the plan set), never a secret. */
  detail?: Record<string, unknown> | undefined
}

/** Who made a change and from where: what an event says beside what happened. */
export interface Requester {
  /** The signed-in user acting (null: someone not signed in, or the command line). */
  actorId: string | null
  ip: string | null
  userAgent: string | null
}

/** A change no request made (the command line, the first start): no one, from nowhere. */
export const NO_REQUESTER: Requester = { actorId: null, ip: null, userAgent: null }

/**
 * Who is behind a request: its caller when one is signed in, its client address (as
 * TRUST_PROXY resolves it) and its User-Agent.
 */
export function requesterOf(request: FastifyRequest): Requester {
  const agent = request.headers['user-agent']
  // note: `caller` is set only on routes that authenticate; anonymous ones leave it undefined
  const caller = (request as { caller?: { userId: string } }).caller
  return {
    actorId: caller?.userId ?? null,
    ip: request.ip ?? null,
    userAgent: typeof agent === 'string' && agent.length > 0 ? agent : null,
  }
}

const MAX_USER_AGENT = 512

/** Records one event, in the caller's transaction when it has one. */
export async function recordSecurityEvent(
  db: Db,
  event: SecurityEvent,
  at: string = new Date().toISOString(),
): Promise<void> {
  await db
    .insertInto('security_events')
    .values({
      id: newId(),
      at,
      user_id: event.userId,
      actor_id: event.actorId,
      kind: event.kind,
      ip: event.ip ?? null,
      user_agent: event.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
      detail: event.detail === undefined ? null : JSON.stringify(event.detail),
    })
    .execute()
}

/**
 * Records what happened to `userId`, made by `by` (NO_REQUESTER when no request made it): the
 * one line each service adds inside the transaction of its change.
 */
export const recordBy = (
  db: Db,
  by: Requester | undefined,
  kind: SecurityEventKind,
  userId: string,
  detail?: Record<string, unknown>,
): Promise<void> =>
  recordSecurityEvent(db, {
    kind,
    userId,
    ...(by ?? NO_REQUESTER),
    ...(detail !== undefined && { detail }),
  })
