import { type Kysely, sql } from 'kysely'
import type { MigrationSteps } from '../engine.ts'

// The engine-specific steps of statusd's migrations on PostgreSQL.

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

// the counters of a status, int8 since 2026-11-25 bigint-counters
const COUNTERS = [
  ['statuses', 'version'],
  ['statuses', 'change_count'],
  ['status_history', 'change_no'],
] as const

async function setCounterType(db: Kysely<unknown>, type: 'bigint' | 'integer'): Promise<void> {
  for (const [table, column] of COUNTERS)
    await db.schema
      .alterTable(table)
      .alterColumn(column, (c) => c.setDataType(type))
      .execute()
}

/** PostgreSQL's steps: schemas; heap tables with their indexes; 32-bit `integer` widened. */
export const postgresMigrationSteps: MigrationSteps = {
  bookkeepingSchema: currentSchema,
  // a heap table and its primary-key index serve a history page well enough
  clusteredHistory: async () => {},
  clusteredStatuses: async () => {},
  bigintCounters: (db, direction) => setCounterType(db, direction === 'up' ? 'bigint' : 'integer'),
  historyWithoutStatusReference: async (db, direction) => {
    // the name PostgreSQL gave the initial migration's inline reference
    if (direction === 'up')
      await sql`alter table status_history drop constraint status_history_status_id_fkey`.execute(
        db,
      )
    else
      await sql`alter table status_history add constraint status_history_status_id_fkey
        foreign key (status_id) references statuses (id) on delete cascade`.execute(db)
  },
  // note: a volatile default, so existing rows are rewritten once (the migration's own
  // transaction id: events recorded before it are old news to every stream)
  outboxCommitOrder: async (db, direction) => {
    if (direction === 'up') {
      await sql`alter table outbox_events add column tx_id xid8 default pg_current_xact_id()`.execute(
        db,
      )
      await sql`create index outbox_events_tx_id on outbox_events (tx_id)`.execute(db)
    } else await sql`alter table outbox_events drop column tx_id`.execute(db)
  },
  rateLimitCounters: async (db, direction) => {
    // UNLOGGED: no WAL record per request, so a count costs no fsync; a crash empties the
    // table, which forgets the current minute's counts. fillfactor leaves room on each page
    // for the updated row version (a HOT update: no index entry to write).
    if (direction === 'up')
      await sql`create unlogged table rate_limit_counters (
        key text primary key,
        window_ends timestamptz not null,
        count bigint not null
      ) with (fillfactor = 50)`.execute(db)
    else await sql`drop table rate_limit_counters`.execute(db)
  },
}
