import type { Db } from '../../db/database.ts'
import { lockRowsForWrite } from '../../db/locks.ts'

/**
 * The most history rows one transaction deletes, by a prune or a deleted status's sweep: a
 * few milliseconds of SQLite's one writer (and of the event loop), so no request waits on
 * another's bulk work (docs/api.md#delete-a-status).
 */
export const HISTORY_BATCH = 5_000

export interface HistoryRow {
  change_no: number
  value: string
  at: string
  by_user_id: string
  by_name: string | null
  /** The API key the value was written with (null: none noted), and its label if it still exists. */
  by_key_id: string | null
  by_key_label: string | null
  /** 'schedule': the timed worker wrote it; null: an ordinary write. */
  via: string | null
}

export interface HistoryQuery {
  /** Entries older than this are past retention (null: keep forever)… */
  cutoff: string | null
  /** …except this one, the entry that set the current value. */
  keepChangeNo: number
  /** Continue below this change number (the previous page's last). */
  before?: number
  limit?: number
}

/** A status's value updates, newest first, within retention. */
export function listHistory(db: Db, statusId: string, q: HistoryQuery): Promise<HistoryRow[]> {
  const { cutoff, keepChangeNo, before, limit } = q
  let query = db
    .selectFrom('status_history as h')
    .leftJoin('users as u', 'u.id', 'h.by_user_id')
    .leftJoin('api_keys as k', 'k.id', 'h.by_key_id')
    .select([
      'h.change_no',
      'h.value',
      'h.at',
      'h.by_user_id',
      'u.name as by_name',
      'h.by_key_id',
      'k.label as by_key_label',
      'h.via',
    ])
    .where('h.status_id', '=', statusId)
  // note: pruning happens on write, so a status nobody writes to may still hold old rows;
  // the read filter keeps the answer exact anyway
  if (cutoff !== null)
    query = query.where((eb) =>
      eb.or([eb('h.at', '>=', cutoff), eb('h.change_no', '=', keepChangeNo)]),
    )
  if (before !== undefined) query = query.where('h.change_no', '<', before)
  query = query.orderBy('h.change_no', 'desc')
  if (limit !== undefined) query = query.limit(limit)
  return query.execute()
}

/**
 * Deletes the status's entries older than the cutoff that come before its oldest entry
 * within retention, except the one that set the current value. Its cost is the expired
 * entries it deletes, not the status's whole history: it runs on every value update.
 *
 * note: `(status_id, change_no)` is the only index, so the entries are walked in change
 * order from the oldest and the walk stops at the first one within retention. Entries are
 * written in time order, so nothing expired follows it; if a clock ever went back (two
 * instances on PostgreSQL), an expired entry after it waits until the entries before it
 * expire too, and the read filter hides it meanwhile. Deleting `at < cutoff` over the whole
 * history instead read every entry of the status on every write, even with nothing to
 * delete; this way a write reads only what goes and the first entry kept.
 * The range starts at the oldest entry, which changes nothing but PostgreSQL's estimate:
 * with an upper bound alone it expects a third of a busy status's history, and a cost that
 * high switches on JIT compilation, which costs each write more than the delete itself.
 *
 * At most `batch` entries go per call (change numbers are distinct integers, so the range
 * from the oldest one `batch` wide holds no more): the first write after a plan downgrade
 * once deleted a whole history's excess in one statement and stalled everything meanwhile.
 * The rest goes with the following writes, one batch each; the read filter hides it
 * meanwhile (docs/api.md#history).
 */
export async function pruneHistory(
  db: Db,
  statusId: string,
  cutoff: string,
  keepChangeNo: number,
  batch: number = HISTORY_BATCH,
): Promise<number> {
  return pruneHistories(db, [{ statusId, cutoff, keepChangeNo }], batch)
}

/** One status's history to prune (pruneHistory). */
export interface HistoryPrune {
  statusId: string
  cutoff: string
  keepChangeNo: number
}

/**
 * pruneHistory for several statuses in one statement (the statuses of a batch of writes):
 * each status's range, as pruneHistory finds it, joined by OR, so that each is still one
 * walk of the primary key.
 */
export async function pruneHistories(
  db: Db,
  prunes: readonly HistoryPrune[],
  batch: number = HISTORY_BATCH,
): Promise<number> {
  if (prunes.length === 0) return 0
  const oldest = (statusId: string) =>
    db
      .selectFrom('status_history')
      .select('change_no')
      .where('status_id', '=', statusId)
      .orderBy('change_no')
      .limit(1)
  const result = await db
    .deleteFrom('status_history')
    .where((eb) =>
      eb.or(
        prunes.map(({ statusId, cutoff, keepChangeNo }) =>
          eb.and([
            eb('status_id', '=', statusId),
            eb('at', '<', cutoff),
            eb('change_no', '>=', oldest(statusId)),
            eb('change_no', '<', eb(oldest(statusId), '+', batch)),
            eb(
              'change_no',
              '<',
              eb.fn.coalesce(
                eb
                  .selectFrom('status_history')
                  .select('change_no')
                  .where('status_id', '=', statusId)
                  .where('change_no', '<', keepChangeNo)
                  .where('at', '>=', cutoff)
                  .orderBy('change_no')
                  .limit(1),
                eb.val(keepChangeNo),
              ),
            ),
          ]),
        ),
      ),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

// A deleted status's history, removed by the sweep (history-sweep.ts) in batches.

/** Records, in the delete's transaction, that the status's history is to be swept. */
export async function recordStatusDeletion(db: Db, statusId: string, at: string): Promise<void> {
  await db
    .insertInto('status_deletions')
    .values({ status_id: statusId, deleted_at: at })
    .onConflict((oc) => oc.doNothing())
    .execute()
}

/** Deleted statuses whose history is still to be swept, oldest deletion first. */
export async function pendingDeletions(db: Db, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('status_deletions')
    .select('status_id')
    .orderBy('deleted_at')
    .orderBy('status_id')
    .limit(limit)
    .execute()
  return rows.map((r) => r.status_id)
}

/**
 * Takes a pending deletion for this transaction (locked until it ends, so two instances on
 * PostgreSQL sweep one status's batches in turn); false when another sweep finished it.
 */
export async function claimDeletion(db: Db, statusId: string): Promise<boolean> {
  const row = await lockRowsForWrite(
    db,
    db.selectFrom('status_deletions').select('status_id').where('status_id', '=', statusId),
  ).executeTakeFirst()
  return row !== undefined
}

/** Deletes up to `batch` of a status's history entries, oldest first; returns how many. */
export async function deleteHistoryBatch(db: Db, statusId: string, batch: number): Promise<number> {
  const result = await db
    .deleteFrom('status_history')
    .where('status_id', '=', statusId)
    .where('change_no', 'in', (eb) =>
      eb
        .selectFrom('status_history')
        .select('change_no')
        .where('status_id', '=', statusId)
        .orderBy('change_no')
        .limit(batch),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** The status's history is all gone: its deletion is done. */
export async function finishDeletion(db: Db, statusId: string): Promise<void> {
  await db.deleteFrom('status_deletions').where('status_id', '=', statusId).execute()
}
