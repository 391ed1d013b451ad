import type { Kysely, UpdateResult } from 'kysely'
import type {
  DB,
  Db,
  NewHistoryRow,
  NewStatusRow,
  StatusRow,
  StatusRowUpdate,
} from '../../db/database.ts'
import { lockRowsForWrite } from '../../db/locks.ts'
import { type PreparedQuery, preparedByShape, prepareQuery } from '../../db/prepared.ts'
import { recordStatusDeletion } from './history.repository.ts'

// The write hot path (PATCH by id, POST by key) runs prepared queries: built and compiled
// once, not per request (docs/performance.md).

const selectById = (db: Kysely<DB>, id: string) =>
  db.selectFrom('statuses').selectAll().where('id', '=', id)

const selectByKey = (db: Kysely<DB>, ownerId: string, key: string) =>
  db
    .selectFrom('statuses')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('status_key', '=', key)

// A row read to be written stays locked until the transaction ends (lockRowsForWrite):
// concurrent writers of one status take turns from the read on, so `If-Match` and every
// other check on the row read hold when the write lands.
const byId = prepareQuery<{ id: string }, StatusRow>((db, p) => selectById(db, p('id')))
const byIdForWrite = prepareQuery<{ id: string }, StatusRow>((db, p) =>
  lockRowsForWrite(db, selectById(db, p('id'))),
)
const byKey = prepareQuery<{ ownerId: string; key: string }, StatusRow>((db, p) =>
  selectByKey(db, p('ownerId'), p('key')),
)
const byKeyForWrite = prepareQuery<{ ownerId: string; key: string }, StatusRow>((db, p) =>
  lockRowsForWrite(db, selectByKey(db, p('ownerId'), p('key'))),
)

export const findStatusById = async (db: Db, id: string): Promise<StatusRow | undefined> =>
  (await byId(db, { id })).rows[0]

export const findStatusByKey = async (
  db: Db,
  ownerId: string,
  key: string,
): Promise<StatusRow | undefined> => (await byKey(db, { ownerId, key })).rows[0]

/** A status by its public share id (public or not: the service decides who sees it). */
export const findStatusByShareId = (db: Db, shareId: string): Promise<StatusRow | undefined> =>
  db.selectFrom('statuses').selectAll().where('share_id', '=', shareId).executeTakeFirst()

/** A status by id, to be changed in this transaction (its row locked: lockRowsForWrite). */
export const findStatusByIdForWrite = async (db: Db, id: string): Promise<StatusRow | undefined> =>
  (await byIdForWrite(db, { id })).rows[0]

/** A status by its owner's key, to be changed in this transaction (its row locked: lockRowsForWrite). */
export const findStatusByKeyForWrite = async (
  db: Db,
  ownerId: string,
  key: string,
): Promise<StatusRow | undefined> => (await byKeyForWrite(db, { ownerId, key })).rows[0]

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

/**
 * Applies changes to `current`, a status read for writing in this transaction
 * (`findStatusBy…ForWrite`); with `countValueChange` the change counter moves too. The version
 * moves on every update, value or not (it numbers the status's events). Returns the row as it
 * now stands, or undefined when the status is gone.
 *
 * note: the new row is `current` with the changes applied, not read back (`returning *`):
 * nothing can change the row between that read and this write (SQLite writes one transaction
 * at a time; PostgreSQL's read holds `FOR UPDATE`), and building the returned row cost more
 * than the update itself (docs/performance.md#where-the-time-goes).
 */
export async function updateStatusRow(
  db: Db,
  current: StatusRow,
  changes: StatusRowUpdate,
  countValueChange: boolean,
): Promise<StatusRow | undefined> {
  const columns = Object.keys(changes) as (keyof StatusRowUpdate)[]
  const shape = `${columns.join(',')}${countValueChange ? ';count' : ''}`
  let update = updateShapes.get(shape)
  if (update === undefined) {
    update = prepareQuery((db, p) =>
      db
        .updateTable('statuses')
        .set((eb) => ({
          ...Object.fromEntries(columns.map((column) => [column, p(column)])),
          version: eb('version', '+', 1),
          ...(countValueChange && { change_count: eb('change_count', '+', 1) }),
        }))
        .where('id', '=', p(WHERE_ID) as string),
    )
    updateShapes.set(shape, update)
  }
  const result = await update(db, { ...changes, [WHERE_ID]: current.id })
  // a concurrent delete between the read and this write: the status is gone
  if (!result.numAffectedRows) return undefined
  return {
    ...current,
    ...(changes as Partial<StatusRow>),
    version: Number(current.version) + 1,
    change_count: Number(current.change_count) + (countValueChange ? 1 : 0),
  }
}

// One prepared update per set of changed columns: at most 2^(updatable columns), in practice
// a handful (a value; a value and a name; …).
const updateShapes = new Map<string, PreparedQuery<Record<string, unknown>, UpdateResult>>()
const WHERE_ID = ' id' // not a column name, so it cannot clash with a change

const historyInsert = prepareQuery<NewHistoryRow, never>((db, p) =>
  db.insertInto('status_history').values({
    status_id: p('status_id'),
    change_no: p('change_no'),
    value: p('value'),
    at: p('at'),
    by_user_id: p('by_user_id'),
  }),
)

export const insertHistory = async (db: Db, row: NewHistoryRow): Promise<void> => {
  await historyInsert(db, row)
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

type OwnedPageParams = {
  ownerId: string
  createdAt: string
  id: string
  limit: number
}

/**
 * The list's query for one shape of page (with a cursor or not, with a limit or not),
 * prepared once: `GET /v1/user/status` is called as often as a client polls it.
 */
const ownedPageQuery = preparedByShape((withCursor: boolean, withLimit: boolean) =>
  prepareQuery<OwnedPageParams, OwnedListRow>((db, p) => {
    let query = db
      .selectFrom('statuses')
      .select(['id', 'status_key', 'share_id', 'name', 'created_at'])
      .where('owner_id', '=', p('ownerId'))
    // note: a row-value comparison, not `created_at > ? OR (created_at = ? AND id > ?)`: both
    // engines seek the (owner_id, created_at, id) index straight to the cursor with it, where
    // the OR form walks the owner's statuses from the first one (a page at a random place in
    // a list of a million took 76 ms, median, against 0.07 ms)
    if (withCursor)
      query = query.where((eb) =>
        eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(p('createdAt'), p('id'))),
      )
    query = query.orderBy('created_at').orderBy('id')
    return withLimit ? query.limit(p('limit')) : query
  }),
)

/** The owner's statuses in creation order (id breaks ties within a millisecond). */
export async function listOwnedStatuses(
  db: Db,
  ownerId: string,
  page: OwnedPage,
): Promise<OwnedListRow[]> {
  const { after, limit, among } = page
  if (among !== undefined) return listOwnedStatusesAmong(db, ownerId, among, page)
  const query = ownedPageQuery(after !== undefined, limit !== undefined)
  const params = {
    ownerId,
    createdAt: after?.createdAt ?? '',
    id: after?.id ?? '',
    limit: limit ?? 0,
  }
  return (await query(db, params)).rows
}

/**
 * The page of `listOwnedStatuses` among some statuses only: a confined key's list (at most
 * MAX_KEY_STATUSES ids), rare enough not to need a prepared query.
 */
async function listOwnedStatusesAmong(
  db: Db,
  ownerId: string,
  among: readonly string[],
  { after, limit }: OwnedPage,
): Promise<OwnedListRow[]> {
  if (among.length === 0) return []
  let query = db
    .selectFrom('statuses')
    .select(['id', 'status_key', 'share_id', 'name', 'created_at'])
    .where('owner_id', '=', ownerId)
    .where('id', 'in', [...among])
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
