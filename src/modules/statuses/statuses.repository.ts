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
import { type PreparedQuery, preparedByShape, prepareQuery, prepareSql } from '../../db/prepared.ts'
import { HISTORY_BATCH, recordStatusDeletion } from './history.repository.ts'

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
    by_key_id: p('by_key_id'),
  }),
)

export const insertHistory = async (db: Db, row: NewHistoryRow): Promise<void> => {
  await historyInsert(db, row)
}

// A value write in one statement (PostgreSQL: docs/postgres.md#how-a-write-reaches-postgresql):
// what the service's general path does for a value written by the status's owner, as one
// round trip instead of six to nine. It applies only where that path would change nothing
// else: a status without a palette (whose colour a value can imply) and without staleAfter
// (whose silence a value write re-times), within the key's reach and the If-Match tags given.
// Anything else writes nothing, and the general path runs.
//
// - `locked` locks the row (FOR UPDATE) and reads the value being replaced; a concurrent
//   writer of the status waits here, and the UPDATE's conditions (owner, version for
//   If-Match) are checked again on the row as that writer left it (READ COMMITTED).
// - `pruned` removes history past the owner's retention exactly as pruneHistory does
//   (`$cutoff` null: none).
// - `event`: a `status.changed` outbox event when the status has a notification rule
//   (docs/notifications.md#delivery), else, with `$live`, the `live.status` row that relays the
//   change to the other instances (docs/postgres.md#the-outbox-changes-no-notification-can-lose).
// note: the payload's JSON is built here, with the same members as notifiedStatus.
const VALUE_WRITE_CTES = `updated as (
  update statuses s set value = $value, updated_at = $now, value_updated_at = $now,
    version = s.version + 1, change_count = s.change_count + 1
  from locked
  where s.id = locked.id and s.owner_id = $userId and s.palette is null
    and s.stale_after is null
    and ($reach::text[] is null or s.id = any($reach::text[]))
    and ($tags::text[] is null or '"' || s.id || '.' || s.version || '"' = any($tags::text[]))
  returning s.id, s.share_id, s.owner_id, s.status_key, s.name, s.type, s.value,
    s.access_type, s.description, s.color_no, s.access_type_user_list,
    s.access_type_history, s.listed, s.palette, s.stale_after, s.stale_at,
    s.stale_notified_at, s.name_search, s.version, s.change_count, s.created_at,
    s.updated_at, s.value_updated_at, locked.value as previous_value,
    exists (select 1 from notification_rules r where r.status_id = s.id) as has_rule
), history as (
  insert into status_history (status_id, change_no, value, at, by_user_id, by_key_id)
  select id, change_count, value, $now, $userId, $keyId::text from updated
), pruned as (
  delete from status_history h using updated u
  where h.status_id = u.id and h.at < $cutoff::text
    and h.change_no >= (select o.change_no from status_history o where o.status_id = u.id
      order by o.change_no limit 1)
    and h.change_no < (select o.change_no from status_history o where o.status_id = u.id
      order by o.change_no limit 1) + $batch::int8
    and h.change_no < coalesce((select k.change_no from status_history k
      where k.status_id = u.id and k.change_no < u.change_count and k.at >= $cutoff::text
      order by k.change_no limit 1), u.change_count)
), event as (
  insert into outbox_events (id, type, status_id, user_id, channel_id, payload, created_at, done_at)
  select $eventId, case when has_rule then 'status.changed' else 'live.status' end, id, null, null,
    case when has_rule then json_build_object('status', json_build_object('id', id,
      'shareId', share_id, 'name', name, 'value', value, 'previousValue', previous_value,
      'colorNo', color_no, 'changeCount', change_count,
      'url', $linkBase::text || '/s/' || share_id), 'at', $now::text)::text
    else json_build_object('kind', 'status', 'version', version)::text end,
    case when has_rule then $now else $clockNow end,
    case when has_rule then null else $clockNow end
  from updated where has_rule or $live::boolean
)
select * from updated`

const valueWriteById = prepareSql<ValueWriteParams & { id: string }, ValueWritten>(
  `with locked as (select id, value from statuses where id = $id for update), ${VALUE_WRITE_CTES}`,
)
const valueWriteByKey = prepareSql<ValueWriteParams & { key: string }, ValueWritten>(
  `with locked as (select id, value from statuses where owner_id = $userId and status_key = $key
    for update), ${VALUE_WRITE_CTES}`,
)

// the statement's parameters: the write's fields, its target spelled out by the statement
// that takes it, and the history pruning's batch size
type ValueWriteParams = Omit<ValueWrite, 'target'> & { batch: number }

/** The row a one-statement value write left, with what it replaced and what it recorded. */
export interface ValueWritten extends StatusRow {
  previous_value: string | null
  /** True when the write recorded a `status.changed` event (the status has a rule). */
  has_rule: boolean
}

export interface ValueWrite {
  /** The status: by id, or by its owner's key. */
  target: { id: string } | { key: string }
  /** The writer, who must own the status. */
  userId: string
  /** The API key the writer presented; null: none (a session). */
  keyId: string | null
  value: string
  /** The write's time (updated_at, the history entry, the status event). */
  now: string
  /** The service clock's time (a `live.status` row's). */
  clockNow: string
  /** The statuses the caller's key is confined to; null: any. */
  reach: readonly string[] | null
  /** If-Match's strong tags; null: none asked for (or `*`). */
  tags: readonly string[] | null
  /** The owner's retention: history before it goes; null: kept. */
  cutoff: string | null
  /** The id of the outbox row the write records. */
  eventId: string
  /** The origin of the status's page in a notification. */
  linkBase: string
  /** Record a `live.status` row when no status event is recorded (a bus between instances). */
  live: boolean
}

/**
 * Writes a value by the status's owner in one statement, where the engine is best served so
 * (writesInOneStatement) and the status allows (see VALUE_WRITE_CTES): updated row, history
 * entry, retention and outbox row. Undefined when it wrote nothing: no such status, or one
 * the general path must handle (it also gives the answer: 404, 412, …).
 */
export async function writeValueInOneStatement(
  db: Db,
  write: ValueWrite,
): Promise<ValueWritten | undefined> {
  const { target, ...rest } = write
  const params = { ...rest, batch: HISTORY_BATCH }
  const result =
    'id' in target
      ? await valueWriteById(db, { ...params, id: target.id })
      : await valueWriteByKey(db, { ...params, key: target.key })
  return result.rows[0]
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
