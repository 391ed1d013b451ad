import type { Db } from '../../db/database.ts'
import { prepareQuery } from '../../db/prepared.ts'

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

/** A status's value updates, newest first, within retention. */
export function listHistory(db: Db, statusId: string, q: HistoryQuery): Promise<HistoryRow[]> {
  let query = db
    .selectFrom('status_history as h')
    .leftJoin('users as u', 'u.id', 'h.by_user_id')
    .select(['h.change_no', 'h.value', 'h.at', 'h.by_user_id', 'u.name as by_name'])
    .where('h.status_id', '=', statusId)
  const { cutoff, before } = q
  // note: pruning happens on write, so a status nobody writes to may still hold old rows;
  // the read filter keeps the answer exact anyway
  if (cutoff !== null)
    query = query.where((eb) =>
      eb.or([eb('h.at', '>=', cutoff), eb('h.change_no', '=', q.keepChangeNo)]),
    )
  if (before !== undefined) query = query.where('h.change_no', '<', before)
  query = query.orderBy('h.change_no', 'desc')
  if (q.limit !== undefined) query = query.limit(q.limit)
  return query.execute()
}

/**
 * Deletes the status's entries older than the cutoff, except the one that set the current
 * value. Bounded: one status, through the (status_id, change_no) primary key.
 */
const prune = prepareQuery<{ statusId: string; cutoff: string; keepChangeNo: number }, never>(
  (db, p) =>
    db
      .deleteFrom('status_history')
      .where('status_id', '=', p('statusId'))
      .where('at', '<', p('cutoff'))
      .where('change_no', '<', p('keepChangeNo')),
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
