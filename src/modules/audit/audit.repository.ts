import type { Db } from '../../db/database.ts'

/** A stored event with the names of its actor and of the account concerned. */
export interface SecurityEventRow {
  id: string
  at: string
  user_id: string | null
  user_name: string | null
  actor_id: string | null
  actor_name: string | null
  kind: string
  ip: string | null
  user_agent: string | null
  detail: string | null
}

/**
 * Events since `since`, newest first (at, then id, descending), after `before` (a position
 * in that order), of one account (`userId`; null: events of no account) or all, of one kind or
 * any; `limit` rows at most.
 */
export function listSecurityEvents(
  db: Db,
  filter: {
    since: string
    userId?: string | null
    kind?: string
    before?: { at: string; id: string }
    limit: number
  },
): Promise<SecurityEventRow[]> {
  let query = db
    .selectFrom('security_events as e')
    .leftJoin('users as actor', 'actor.id', 'e.actor_id')
    .leftJoin('users as subject', 'subject.id', 'e.user_id')
    .select([
      'e.id',
      'e.at',
      'e.user_id',
      'subject.name as user_name',
      'e.actor_id',
      'actor.name as actor_name',
      'e.kind',
      'e.ip',
      'e.user_agent',
      'e.detail',
    ])
    .where('e.at', '>=', filter.since)
  if (filter.userId !== undefined)
    query =
      filter.userId === null
        ? query.where('e.user_id', 'is', null)
        : query.where('e.user_id', '=', filter.userId)
  if (filter.kind !== undefined) query = query.where('e.kind', '=', filter.kind)
  const before = filter.before
  if (before !== undefined)
    query = query.where((eb) =>
      eb.or([
        eb('e.at', '<', before.at),
        eb.and([eb('e.at', '=', before.at), eb('e.id', '<', before.id)]),
      ]),
    )
  return query.orderBy('e.at', 'desc').orderBy('e.id', 'desc').limit(filter.limit).execute()
}

/** How many events of this kind one account (null: no account) has had since `since`. */
export async function countRecentEvents(
  db: Db,
  userId: string | null,
  kind: string,
  since: string,
): Promise<number> {
  const row = await db
    .selectFrom('security_events')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('user_id', userId === null ? 'is' : '=', userId)
    .where('at', '>=', since)
    .where('kind', '=', kind)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Deletes up to `limit` events recorded before `before` (oldest first); how many it deleted. */
export async function deleteSecurityEventsBefore(
  db: Db,
  before: string,
  limit: number,
): Promise<number> {
  const result = await db
    .deleteFrom('security_events')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('security_events')
        .select('id')
        .where('at', '<', before)
        .orderBy('at')
        .limit(limit),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
