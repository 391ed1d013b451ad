import { sql } from 'kysely'
import type { Db, User } from '../../db/database.ts'

/** A user as the operators' list reads it: the row, with what the list shows beside it. */
export type AdminUserRow = User & {
  status_count: number | string
  last_sign_in_at: string | null
}

/** `text` as a LIKE pattern that matches it literally, `!` being the escape character. */
const likeLiteral = (text: string): string => text.replace(/[!%_]/g, (c) => `!${c}`)

export interface UserListQuery {
  /** Only users whose name or e-mail holds this text, already lower-cased. */
  search?: string
  /** Creation position to continue after, from the previous page's last row. */
  after?: { createdAt: string; id: string } | undefined
  limit: number
}

const withCounts = (db: Db) =>
  db
    .selectFrom('users as u')
    .selectAll('u')
    .select((eb) => [
      eb
        .selectFrom('statuses as s')
        .select((e) => e.fn.countAll<number | string>().as('n'))
        .whereRef('s.owner_id', '=', 'u.id')
        .as('status_count'),
      // the latest session's start: when the user last signed in, as far as a session still tells
      eb
        .selectFrom('sessions as se')
        .select((e) => e.fn.max('se.created_at').as('m'))
        .whereRef('se.user_id', '=', 'u.id')
        .as('last_sign_in_at'),
    ])

/**
 * Users in creation order after a position, at most `limit` (the caller asks one more to
 * learn whether a page follows), those whose name or e-mail holds `search` when given.
 */
export function listUsersForAdmin(db: Db, query: UserListQuery): Promise<AdminUserRow[]> {
  let q = withCounts(db)
  if (query.search !== undefined) {
    const pattern = `%${likeLiteral(query.search)}%`
    q = q.where((eb) =>
      eb.or([
        sql<boolean>`lower(${eb.ref('u.name')}) like ${pattern} escape '!'`,
        sql<boolean>`${eb.ref('u.email_key')} like ${pattern} escape '!'`,
      ]),
    )
  }
  const after = query.after
  if (after !== undefined)
    q = q.where((eb) =>
      eb.or([
        eb('u.created_at', '>', after.createdAt),
        eb.and([eb('u.created_at', '=', after.createdAt), eb('u.id', '>', after.id)]),
      ]),
    )
  return q.orderBy('u.created_at').orderBy('u.id').limit(query.limit).execute() as Promise<
    AdminUserRow[]
  >
}

export const findUserForAdmin = (db: Db, id: string): Promise<AdminUserRow | undefined> =>
  withCounts(db).where('u.id', '=', id).executeTakeFirst() as Promise<AdminUserRow | undefined>

/** Events recorded for the notifications and not fanned out yet: the outbox's backlog. */
export async function countPendingOutboxEvents(db: Db): Promise<number> {
  const row = await db
    .selectFrom('outbox_events')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('done_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

// note: the operators' page reads the notifications' settings table for one fact, whether
// browser push has its key pair yet; a row read, nothing written
/** Whether the service made its browser push key pair (VAPID). */
export async function hasPushKeys(db: Db): Promise<boolean> {
  const row = await db
    .selectFrom('service_settings')
    .select('name')
    .where('name', '=', 'vapid')
    .executeTakeFirst()
  return row !== undefined
}

/** How many users there are. */
export async function countUsers(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
