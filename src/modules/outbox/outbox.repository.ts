import type {
  AliasableExpression,
  ExpressionBuilder,
  Insertable,
  Selectable,
  SqlBool,
} from 'kysely'
import type { DB, Db, OutboxEventsTable } from '../../db/database.ts'

export type OutboxEventRow = Selectable<OutboxEventsTable>

// note: the outbox reads the rules table, which the notifications module owns, for one reason:
// a `status.changed` event that no rule can match would be fanned out to nobody, and recording
// it would cost every value write an id, a JSON payload, an insert and its share of the WAL
// (docs/performance.md). One indexed read: the rules' primary key starts with status_id.
/** True when someone has a notification rule on this status (read in the write's transaction). */
export async function statusHasNotificationRule(db: Db, statusId: string): Promise<boolean> {
  const row = await db
    .selectFrom('notification_rules')
    .select('status_id')
    .where('status_id', '=', statusId)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * A condition on a query of `statuses`: someone has a notification rule on the status, for a
 * read that selects it beside the row (the locking read of a batch of writes).
 */
export const hasNotificationRule = (
  eb: ExpressionBuilder<DB, 'statuses'>,
): AliasableExpression<SqlBool> =>
  eb.exists(
    eb
      .selectFrom('notification_rules')
      .select('notification_rules.status_id')
      .whereRef('notification_rules.status_id', '=', 'statuses.id'),
  )

/** Of these statuses, the ones someone has a notification rule on (one read for a batch). */
export async function statusesWithNotificationRules(
  db: Db,
  statusIds: readonly string[],
): Promise<Set<string>> {
  if (statusIds.length === 0) return new Set()
  const rows = await db
    .selectFrom('notification_rules')
    .select('status_id')
    .distinct()
    .where('status_id', 'in', [...statusIds])
    .execute()
  return new Set(rows.map((row) => row.status_id))
}

export async function insertOutboxEvent(db: Db, row: Insertable<OutboxEventsTable>): Promise<void> {
  await db.insertInto('outbox_events').values(row).execute()
}

/** Inserts events, one statement for all of them. */
export async function insertOutboxEvents(
  db: Db,
  rows: readonly Insertable<OutboxEventsTable>[],
): Promise<void> {
  if (rows.length > 0)
    await db
      .insertInto('outbox_events')
      .values([...rows])
      .execute()
}

/**
 * Events of these types not fanned out yet, oldest first, at most `limit`: a plain read, so
 * the fan-out looks up who to tell outside any write (docs/notifications.md#delivery).
 */
export const listPendingOutboxEventsOf = (
  db: Db,
  types: readonly string[],
  limit: number,
): Promise<OutboxEventRow[]> =>
  db
    .selectFrom('outbox_events')
    .selectAll()
    .where('done_at', 'is', null)
    .where('type', 'in', [...types])
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

/** Deletes events fanned out before `before`; returns how many went. */
export async function deleteDoneOutboxEvents(db: Db, before: string): Promise<number> {
  const result = await db
    .deleteFrom('outbox_events')
    .where('done_at', 'is not', null)
    .where('done_at', '<', before)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
