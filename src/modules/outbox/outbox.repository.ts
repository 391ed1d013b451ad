import type { Insertable, Selectable } from 'kysely'
import type { Db, OutboxEventsTable } from '../../db/database.ts'

export type OutboxEventRow = Selectable<OutboxEventsTable>

export async function insertOutboxEvent(db: Db, row: Insertable<OutboxEventsTable>): Promise<void> {
  await db.insertInto('outbox_events').values(row).execute()
}

/** Events not fanned out yet, oldest first, at most `limit`. */
export const listPendingOutboxEvents = (db: Db, limit: number): Promise<OutboxEventRow[]> =>
  db
    .selectFrom('outbox_events')
    .selectAll()
    .where('done_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute()

/** Marks events fanned out; returns how many were still pending (another instance may have won). */
export async function markOutboxEventsDone(db: Db, ids: string[], at: string): Promise<number> {
  if (ids.length === 0) return 0
  const result = await db
    .updateTable('outbox_events')
    .set({ done_at: at })
    .where('id', 'in', ids)
    .where('done_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}
