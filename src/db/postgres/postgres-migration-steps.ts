import { type Kysely, sql } from 'kysely'
import type { MigrationSteps } from '../engine.ts'

// What statusd's schema needs on PostgreSQL alone (MigrationSteps, engine.ts).

/**
 * The schema statusd's tables live in (the first of `search_path`), so the migrator keeps its
 * own bookkeeping tables there too. Without it, Kysely would take another schema's
 * `kysely_migration` table (another app's, or another statusd's) for its own.
 */
async function currentSchema(db: Kysely<unknown>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(
    db,
  )
  const schema = rows[0]?.schema
  // note: a search_path naming only schemas that do not exist leaves no current schema, and
  // the migrator would fail on its lock table with a message that names neither
  if (schema === null || schema === undefined)
    throw Object.assign(
      new Error(
        'no schema of its search_path exists: create the schema first (CREATE SCHEMA …), or fix the search_path option of DATABASE_URL',
      ),
      { code: '3F000' },
    )
  return schema
}

/** PostgreSQL's steps: schemas; heap tables; the outbox's commit order and shared counters. */
export const postgresMigrationSteps: MigrationSteps = {
  bookkeepingSchema: currentSchema,
  // a heap table and its primary-key index serve a history page well enough
  keyOrderedTable: undefined,
  engineSchema: async (db, direction) => {
    if (direction === 'down') {
      await db.schema.dropTable('rate_limit_counters').execute()
      await db.schema.alterTable('outbox_events').dropColumn('tx_id').execute()
      return
    }
    // outbox_events.tx_id: the id of the transaction that recorded the event, filled in by the
    // column's default, indexed: every instance reads the status events other instances
    // committed in commit order, without gaps (outbox-tail.ts,
    // docs/postgres.md#live-updates-across-instances)
    await sql`alter table outbox_events add column tx_id xid8 default pg_current_xact_id()`.execute(
      db,
    )
    await db.schema.createIndex('outbox_events_tx_id').on('outbox_events').column('tx_id').execute()
    // the per-user request counts the instances share (pg-request-counter.ts,
    // docs/postgres.md#scaling-out-behind-a-load-balancer). UNLOGGED: no WAL record per
    // request, so a count costs no fsync; a crash empties the table, which forgets the current
    // window's counts. fillfactor leaves room on each page for the updated row version (a HOT
    // update: no index entry to write). Not statusd's data: not in `DB`, not copied.
    await sql`create unlogged table rate_limit_counters (
      key text primary key,
      window_ends timestamptz not null,
      count bigint not null
    ) with (fillfactor = 50)`.execute(db)
  },
}
