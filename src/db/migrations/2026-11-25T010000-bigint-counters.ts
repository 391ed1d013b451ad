import { type Kysely, PostgresAdapter } from 'kysely'

// PostgreSQL only: the counters of a status (`statuses.version`, `statuses.change_count`,
// `status_history.change_no`) become bigint. As `integer` they stopped at 2^31 − 1: after
// about 2.1 billion writes to one status (25 days at 1 000 a second) every further write to
// it failed for good. SQLite's INTEGER is 64-bit already. The values come back as numbers
// (create-db.ts parses int8 so); they stay far below 2^53.
//
// note: engine-specific (DESIGN.md allows it behind the dialect switch). PostgreSQL rewrites
// both tables, holding them locked: about a minute for 10 M history rows, at the first
// start of this version (docs/operations.md, upgrading).

const COLUMNS = [
  ['statuses', 'version'],
  ['statuses', 'change_count'],
  ['status_history', 'change_no'],
] as const

async function setType(db: Kysely<unknown>, type: 'bigint' | 'integer'): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
  for (const [table, column] of COLUMNS)
    await db.schema
      .alterTable(table)
      .alterColumn(column, (c) => c.setDataType(type))
      .execute()
}

export const up = (db: Kysely<unknown>): Promise<void> => setType(db, 'bigint')

export const down = (db: Kysely<unknown>): Promise<void> => setType(db, 'integer')
