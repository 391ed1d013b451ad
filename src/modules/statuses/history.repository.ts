import type { Db } from '../../db/database.ts'
import { preparedByShape, prepareQuery } from '../../db/prepared.ts'

export interface HistoryRow {
  change_no: number
  value: string
  at: string
  by_user_id: string
  by_name: string | null
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

type HistoryPageParams = {
  statusId: string
  cutoff: string
  keepChangeNo: number
  before: number
  limit: number
}

/**
 * The history's query for one shape of page (with retention or not, after a cursor or not,
 * limited or not), prepared once: it is built and compiled the first time that shape is
 * asked for, not on every request.
 */
const historyPageQuery = preparedByShape(
  (withCutoff: boolean, withBefore: boolean, withLimit: boolean) =>
    prepareQuery<HistoryPageParams, HistoryRow>((db, p) => {
      let query = db
        .selectFrom('status_history as h')
        .leftJoin('users as u', 'u.id', 'h.by_user_id')
        .select(['h.change_no', 'h.value', 'h.at', 'h.by_user_id', 'u.name as by_name'])
        .where('h.status_id', '=', p('statusId'))
      // note: pruning happens on write, so a status nobody writes to may still hold old rows;
      // the read filter keeps the answer exact anyway
      if (withCutoff)
        query = query.where((eb) =>
          eb.or([eb('h.at', '>=', p('cutoff')), eb('h.change_no', '=', p('keepChangeNo'))]),
        )
      if (withBefore) query = query.where('h.change_no', '<', p('before'))
      query = query.orderBy('h.change_no', 'desc')
      return withLimit ? query.limit(p('limit')) : query
    }),
)

/** A status's value updates, newest first, within retention. */
export async function listHistory(
  db: Db,
  statusId: string,
  q: HistoryQuery,
): Promise<HistoryRow[]> {
  const { cutoff, before, limit } = q
  const query = historyPageQuery(cutoff !== null, before !== undefined, limit !== undefined)
  const params = {
    statusId,
    cutoff: cutoff ?? '',
    keepChangeNo: q.keepChangeNo,
    before: before ?? 0,
    limit: limit ?? 0,
  }
  return (await query(db, params)).rows
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
 * history instead read every entry of the status on every write: 0.4 to 1.5 s for statuses
 * of 230 000 to 690 000 entries with nothing to delete, 0.2 ms this way (SQLite).
 * The range starts at the oldest entry, which changes nothing but PostgreSQL's estimate:
 * with an upper bound alone it expects a third of a busy status's history, and a cost that
 * high switches on JIT compilation (7 ms a write).
 */
const prune = prepareQuery<{ statusId: string; cutoff: string; keepChangeNo: number }, never>(
  (db, p) =>
    db
      .deleteFrom('status_history')
      .where('status_id', '=', p('statusId'))
      .where('at', '<', p('cutoff'))
      .where('change_no', '>=', (eb) =>
        eb
          .selectFrom('status_history')
          .select('change_no')
          .where('status_id', '=', p('statusId'))
          .orderBy('change_no')
          .limit(1),
      )
      .where('change_no', '<', (eb) =>
        eb.fn.coalesce(
          eb
            .selectFrom('status_history')
            .select('change_no')
            .where('status_id', '=', p('statusId'))
            .where('change_no', '<', p('keepChangeNo'))
            .where('at', '>=', p('cutoff'))
            .orderBy('change_no')
            .limit(1),
          eb.val(p('keepChangeNo')),
        ),
      ),
)

export async function pruneHistory(
  db: Db,
  statusId: string,
  cutoff: string,
  keepChangeNo: number,
): Promise<void> {
  // note: runs on every value update (the write hot path), so it is prepared once
  await prune(db, { statusId, cutoff, keepChangeNo })
}
