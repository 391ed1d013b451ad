import type { Db } from '../../db/database.ts'
import { newId } from '../../lib/ids.ts'

/**
 * What the security log records (docs/security.md#security-log): what happened to an account,
 * who did it, from where.
 */
export interface SecurityEvent {
  /** What happened, e.g. `signIn`, `signInFailed`, `keyCreated`, `admin.userDisabled`. */
  kind: string
  /** The account concerned; null when no account is (a sign-in to an unknown address). */
  userId: string | null
  /** Who acted: the user, an operator; null for someone not signed in. */
  actorId: string | null
  ip?: string | null | undefined
  userAgent?: string | null | undefined
  /** What else a reader needs (a key's label, the plan set), never a secret. */
  detail?: Record<string, unknown> | undefined
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
