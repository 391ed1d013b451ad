import type { Db, NewSessionRow, SessionRow } from '../../db/database.ts'

export const insertSession = (db: Db, session: NewSessionRow): Promise<SessionRow> =>
  db.insertInto('sessions').values(session).returningAll().executeTakeFirstOrThrow()

export const findSessionByHash = (db: Db, hash: string): Promise<SessionRow | undefined> =>
  db.selectFrom('sessions').selectAll().where('token_hash', '=', hash).executeTakeFirst()

/** A user's sessions, the most recently used first. */
export const listSessions = (db: Db, userId: string): Promise<SessionRow[]> =>
  db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('last_seen_at', 'desc')
    .orderBy('id')
    .execute()

/** Marks a session seen at `at`, unless a request already did so at or after `notBefore`. */
export async function touchSession(
  db: Db,
  id: string,
  at: string,
  notBefore: string,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ last_seen_at: at })
    .where('id', '=', id)
    .where('last_seen_at', '<', notBefore)
    .execute()
}

/** Deletes one of a user's sessions; the ids deleted (none or one). */
export async function deleteSession(db: Db, userId: string, id: string): Promise<string[]> {
  const rows = await db
    .deleteFrom('sessions')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returning('id')
    .execute()
  return rows.map((row) => row.id)
}

/** Deletes a user's sessions, but the one kept (if any); the ids deleted. */
export async function deleteSessionsOf(
  db: Db,
  userId: string,
  keep: string | null,
): Promise<string[]> {
  let query = db.deleteFrom('sessions').where('user_id', '=', userId)
  if (keep !== null) query = query.where('id', '!=', keep)
  const rows = await query.returning('id').execute()
  return rows.map((row) => row.id)
}

/**
 * Deletes a user's sessions that ended (absolutely before `now`, or idle since before
 * `idleSince`) and, of the rest, all but the `keep` most recently used; the ids deleted.
 */
export async function pruneSessions(
  db: Db,
  userId: string,
  now: string,
  idleSince: string,
  keep: number,
): Promise<string[]> {
  const ended = await db
    .deleteFrom('sessions')
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleSince)]))
    .returning('id')
    .execute()
  const surplus = await db
    .selectFrom('sessions')
    .select('id')
    .where('user_id', '=', userId)
    .orderBy('last_seen_at', 'desc')
    .orderBy('id')
    .offset(keep)
    .limit(1000)
    .execute()
  if (surplus.length > 0)
    await db
      .deleteFrom('sessions')
      .where(
        'id',
        'in',
        surplus.map((row) => row.id),
      )
      .execute()
  return [...ended, ...surplus].map((row) => row.id)
}
