import type { AliasableExpression, ExpressionBuilder, Kysely, SqlBool } from 'kysely'
import type { DB, Db, NewHistoryRow, NewStatusRow, StatusRow } from '../../db/database.ts'
import { lockRowsForWrite } from '../../db/locks.ts'
import { recordStatusDeletion } from './history.repository.ts'

const selectById = (db: Kysely<DB>, id: string) =>
  db.selectFrom('statuses').selectAll().where('id', '=', id)

const selectByKey = (db: Kysely<DB>, ownerId: string, key: string) =>
  db
    .selectFrom('statuses')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('status_key', '=', key)

export const findStatusById = (db: Db, id: string): Promise<StatusRow | undefined> =>
  selectById(db, id).executeTakeFirst()

export const findStatusByKey = (
  db: Db,
  ownerId: string,
  key: string,
): Promise<StatusRow | undefined> => selectByKey(db, ownerId, key).executeTakeFirst()

/** A status by its public share id (public or not: the service decides who sees it). */
export const findStatusByShareId = (db: Db, shareId: string): Promise<StatusRow | undefined> =>
  db.selectFrom('statuses').selectAll().where('share_id', '=', shareId).executeTakeFirst()

// A row read to be written stays locked until the transaction ends (lockRowsForWrite):
// concurrent writers of one status take turns from the read on, so `If-Match` and every
// other check on the row read hold when the write lands.

/** A status by id, to be changed in this transaction (its row locked: lockRowsForWrite). */
export const findStatusByIdForWrite = (db: Db, id: string): Promise<StatusRow | undefined> =>
  lockRowsForWrite(db, selectById(db, id)).executeTakeFirst()

/** A status by its owner's key, to be changed in this transaction (its row locked: lockRowsForWrite). */
export const findStatusByKeyForWrite = (
  db: Db,
  ownerId: string,
  key: string,
): Promise<StatusRow | undefined> =>
  lockRowsForWrite(db, selectByKey(db, ownerId, key)).executeTakeFirst()

/**
 * Inserts a status unless a unique column clashes: the owner's key (a concurrent create won)
 * or, rarely, the random share id. Returns the new row, or undefined when nothing was inserted.
 */
export const insertStatusUnlessKeyTaken = (
  db: Db,
  row: NewStatusRow,
): Promise<StatusRow | undefined> =>
  db
    .insertInto('statuses')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .executeTakeFirst()

export const insertHistory = async (db: Db, row: NewHistoryRow): Promise<void> => {
  await db.insertInto('status_history').values(row).execute()
}

/** A row read for writing, what a condition given to the read said of it, its subscribers. */
export interface ReadForWrite {
  row: StatusRow
  flagged: boolean
  /** How many users hold the subscriber role on it. */
  subscribers: number
}

/** The users holding the subscriber role on a status, counted in the statement that reads it. */
const subscribersOf = (eb: ExpressionBuilder<DB, 'statuses'>) =>
  eb
    .selectFrom('status_roles as sr')
    .select((sub) => sub.fn.countAll<number | string>().as('n'))
    .whereRef('sr.status_id', '=', 'statuses.id')
    .where('sr.role', '=', 'subscriber')

/** A status with its subscribers counted in the same statement (a live update's one read). */
export async function findStatusWithSubscribers(
  db: Db,
  id: string,
): Promise<{ row: StatusRow; subscribers: number } | undefined> {
  const found = await selectById(db, id)
    .select((eb) => subscribersOf(eb).as('subscribers'))
    .executeTakeFirst()
  if (!found) return undefined
  const { subscribers, ...row } = found
  return { row, subscribers: Number(subscribers ?? 0) }
}

/** How many users hold the subscriber role on the status (the Status's `subscriberCount`). */
export async function countSubscribers(db: Db, statusId: string): Promise<number> {
  const row = await db
    .selectFrom('status_roles')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status_id', '=', statusId)
    .where('role', '=', 'subscriber')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * Statuses by id and by their owner's key, to be changed in this transaction (locked:
 * lockRowsForWrite), in one statement: a batch of writes reads all its rows at once. Locked
 * in id order, so that batches that meet take their locks in the same order. `flag`, a
 * condition on each status, is read in the same statement (e.g. whether anyone is notified).
 */
export async function findStatusesForWrite(
  db: Db,
  ids: readonly string[],
  keys: readonly { ownerId: string; key: string }[],
  flag: (eb: ExpressionBuilder<DB, 'statuses'>) => AliasableExpression<SqlBool> = (eb) =>
    eb.lit(false),
): Promise<ReadForWrite[]> {
  if (ids.length === 0 && keys.length === 0) return []
  const query = db
    .selectFrom('statuses')
    .selectAll()
    .select((eb) => flag(eb).as('flagged'))
    .select((eb) => subscribersOf(eb).as('subscribers'))
    .where((eb) =>
      eb.or([
        ...(ids.length > 0 ? [eb('id', 'in', [...ids])] : []),
        ...keys.map(({ ownerId, key }) =>
          eb.and([eb('owner_id', '=', ownerId), eb('status_key', '=', key)]),
        ),
      ]),
    )
    .orderBy('id')
  const read = await lockRowsForWrite(db, query).execute()
  // note: SQLite answers a condition with 0 or 1
  return read.map(({ flagged, subscribers, ...row }) => ({
    row,
    flagged: Boolean(flagged),
    subscribers: Number(subscribers ?? 0),
  }))
}

/**
 * Stores the rows the service computed for statuses read for writing in this transaction
 * (findStatusesForWrite), one statement for all of them, one row per status: `columns`
 * (those any of the rows changes) set to the row's. Several rows: an insert of each row
 * that finds it stored (its id), and so updates it. The rows were read locked in this
 * transaction: none is gone.
 */
export async function writeStatusRows(
  db: Db,
  rows: readonly StatusRow[],
  columns: readonly (keyof StatusRow)[],
): Promise<void> {
  const [first] = rows
  if (first === undefined || columns.length === 0) return
  // one row: a plain update, the smaller statement
  if (rows.length === 1) {
    const changes = Object.fromEntries(columns.map((column) => [column, first[column]]))
    await db.updateTable('statuses').set(changes).where('id', '=', first.id).execute()
    return
  }
  await db
    .insertInto('statuses')
    .values([...rows])
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet((eb) =>
          Object.fromEntries(columns.map((column) => [column, eb.ref(`excluded.${column}`)])),
        ),
    )
    .execute()
}

/** Inserts history rows, one statement for all of them. */
export async function insertHistoryRows(db: Db, rows: readonly NewHistoryRow[]): Promise<void> {
  if (rows.length > 0)
    await db
      .insertInto('status_history')
      .values([...rows])
      .execute()
}

/**
 * Deletes the status (its roles cascade) and records its history for the sweep, which
 * removes it in batches after the commit (history-sweep.ts): readers lose the status at
 * once, and the delete costs the same whatever the history's size.
 */
export async function deleteStatusRow(db: Db, id: string, at: string): Promise<boolean> {
  const result = await db.deleteFrom('statuses').where('id', '=', id).executeTakeFirst()
  if (Number(result.numDeletedRows) === 0) return false
  await recordStatusDeletion(db, id, at)
  return true
}

/**
 * Deletes the statuses with these ids, in one statement, and records their deletions for the
 * history sweep; the ids of those that were there.
 */
export async function deleteStatusRows(
  db: Db,
  ids: readonly string[],
  at: string,
): Promise<string[]> {
  if (ids.length === 0) return []
  const gone = await db.deleteFrom('statuses').where('id', 'in', ids).returning('id').execute()
  if (gone.length > 0)
    await db
      .insertInto('status_deletions')
      .values(gone.map((r) => ({ status_id: r.id, deleted_at: at })))
      .onConflict((oc) => oc.doNothing())
      .execute()
  return gone.map((r) => r.id)
}

/** Every status a user owns, their rows locked to be deleted in this transaction. */
export const ownedStatusesForWrite = (
  db: Db,
  ownerId: string,
  limit?: number,
): Promise<StatusRow[]> => {
  const owned = db.selectFrom('statuses').selectAll().where('owner_id', '=', ownerId).orderBy('id')
  return lockRowsForWrite(db, limit === undefined ? owned : owned.limit(limit)).execute()
}

/**
 * Hands the status to a new owner under the given key (docs/sharing.md#transfer). The version
 * moves: the status reads differently to both (its key, what they may change). Its new version.
 */
export async function setStatusOwner(
  db: Db,
  id: string,
  ownerId: string,
  statusKey: string | null,
  at: string,
): Promise<number> {
  const row = await db
    .updateTable('statuses')
    .set((eb) => ({
      owner_id: ownerId,
      status_key: statusKey,
      updated_at: at,
      version: eb('version', '+', 1),
    }))
    .where('id', '=', id)
    .returning('version')
    .executeTakeFirstOrThrow()
  return Number(row.version)
}

export async function countOwnedStatuses(db: Db, ownerId: string): Promise<number> {
  const row = await db
    .selectFrom('statuses')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export interface OwnedPage {
  /** Only these statuses (a key confined to them, docs/accounts.md#scoped-keys). */
  among?: readonly string[]
  limit?: number
  /** Creation position to continue after, from the previous page's last row. */
  after?: { createdAt: string; id: string }
}

export type OwnedListRow = Pick<StatusRow, 'id' | 'status_key' | 'share_id' | 'name' | 'created_at'>

/** The owner's statuses in creation order (id breaks ties within a millisecond). */
export async function listOwnedStatuses(
  db: Db,
  ownerId: string,
  { after, limit, among }: OwnedPage,
): Promise<OwnedListRow[]> {
  if (among !== undefined && among.length === 0) return []
  let query = db
    .selectFrom('statuses')
    .select(['id', 'status_key', 'share_id', 'name', 'created_at'])
    .where('owner_id', '=', ownerId)
  if (among !== undefined) query = query.where('id', 'in', [...among])
  // note: a row-value comparison, not `created_at > ? OR (created_at = ? AND id > ?)`: both
  // engines seek the (owner_id, created_at, id) index straight to the cursor with it, where
  // the OR form walks the owner's statuses from the first one
  if (after)
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.createdAt, after.id)),
    )
  query = query.orderBy('created_at').orderBy('id')
  if (limit !== undefined) query = query.limit(limit)
  return query.execute()
}

/** Of the ids given, the statuses the user owns or holds a role on. */
export async function reachableStatusIds(
  db: Db,
  userId: string,
  ids: readonly string[],
): Promise<string[]> {
  if (ids.length === 0) return []
  const rows = await db
    .selectFrom('statuses as s')
    .select('s.id')
    .where('s.id', 'in', [...ids])
    .where((eb) =>
      eb.or([
        eb('s.owner_id', '=', userId),
        eb.exists(
          eb
            .selectFrom('status_roles as r')
            .select('r.status_id')
            .whereRef('r.status_id', '=', 's.id')
            .where('r.user_id', '=', userId),
        ),
      ]),
    )
    .execute()
  return rows.map((row) => row.id)
}

/**
 * Ids of statuses whose silence turned stale by `now` and was not announced yet, the
 * longest-stale first, at most `limit` (the stale detector's candidates; statuses_stale_at).
 */
export async function dueStaleStatusIds(db: Db, now: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('statuses')
    .select('id')
    .where('stale_at', '<=', now)
    .where('stale_notified_at', 'is', null)
    .orderBy('stale_at')
    .orderBy('id')
    .limit(limit)
    .execute()
  return rows.map((r) => r.id)
}

/**
 * Marks the silences of these statuses announced at `now`, each only if it is still due and
 * unannounced, and returns the rows it marked (as they now stand). The conditions are checked
 * again by the UPDATE itself: on PostgreSQL a row another instance claimed, or a value update
 * started a new silence of, meanwhile (its lock waited for) no longer matches, so each silence
 * is claimed once, whichever instances look. The version moves: the status reads differently
 * now (stale), and live streams number their events by it.
 */
export async function claimStaleStatuses(
  db: Db,
  ids: readonly string[],
  now: string,
): Promise<StatusRow[]> {
  if (ids.length === 0) return []
  return db
    .updateTable('statuses')
    .set((eb) => ({ stale_notified_at: now, version: eb('version', '+', 1) }))
    .where('id', 'in', [...ids])
    .where('stale_at', '<=', now)
    .where('stale_notified_at', 'is', null)
    .returningAll()
    .execute()
}

/** The plans of these users, by id (a user since deleted is absent). */
export async function userPlans(db: Db, userIds: readonly string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('users')
    .select(['id', 'plan'])
    .where('id', 'in', [...userIds])
    .execute()
  return new Map(rows.map((r) => [r.id, r.plan]))
}
