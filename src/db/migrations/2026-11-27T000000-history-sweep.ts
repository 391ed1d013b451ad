import { type Kysely, sql } from 'kysely'
import { migrationSteps } from '../engines.ts'

// A deleted status's history goes in bounded batches, after the delete (docs/api.md#delete-a-status,
// docs/operations.md#history-sweep): deleting millions of rows in the request's transaction
// held SQLite's one writer, and the event loop, for seconds.
//
// - status_deletions: one row per deleted status whose history is still being removed,
//   written in the delete's transaction; the sweep deletes it with the last batch. A crash
//   mid-sweep leaves it, so the next sweep (at start, then on a timer) finishes the work.
// - status_history no longer references statuses: its ON DELETE CASCADE deleted the whole
//   history in the status's delete, the very statement to avoid. Nothing else writes history
//   for a status that is gone (a value write locks the status row first).
//
// note: engine-specific, so the step is the engine's (MigrationSteps.historyWithoutStatusReference).
// SQLite rebuilds status_history to drop the reference: it copies every history row once,
// about a minute for 10 M rows at the first start of this version (docs/operations.md,
// upgrading); PostgreSQL drops the constraint.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('status_deletions')
    .addColumn('status_id', 'text', (c) => c.primaryKey())
    .addColumn('deleted_at', 'text', (c) => c.notNull())
    .execute()
  await migrationSteps(db).historyWithoutStatusReference(db, 'up')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // the reference comes back, so history whose status is gone goes first (the sweep's work)
  await sql`delete from status_history where not exists
    (select 1 from statuses where statuses.id = status_history.status_id)`.execute(db)
  await migrationSteps(db).historyWithoutStatusReference(db, 'down')
  await db.schema.dropTable('status_deletions').execute()
}
