import { sql } from 'kysely'
import type { MigrationSteps } from '../engine.ts'

// What statusd's schema needs on SQLite alone (MigrationSteps, engine.ts).

/** SQLite's steps: one database without schemas; tables stored in primary-key order. */
export const sqliteMigrationSteps: MigrationSteps = {
  bookkeepingSchema: async () => undefined,
  keyOrderedTable: (table) => table.modifyEnd(sql`without rowid`) as typeof table,
  // one process serves a SQLite database: its bus hands every change to every stream, and it
  // counts requests in its own memory. tx_id stays null; `statusd copy` moves it.
  engineSchema: async (db, direction) => {
    if (direction === 'up')
      await db.schema.alterTable('outbox_events').addColumn('tx_id', 'text').execute()
    else await db.schema.alterTable('outbox_events').dropColumn('tx_id').execute()
  },
}
