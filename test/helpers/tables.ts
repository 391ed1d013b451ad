import { type Kysely, sql } from 'kysely'

/**
 * Every table of the database under test (new tables included as migrations add them), on
 * either engine: SQLite's catalogue, or PostgreSQL's current schema (each test has its own).
 */
export async function tableNames(db: Kysely<never> | Kysely<unknown>): Promise<string[]> {
  const loose = db as Kysely<unknown>
  try {
    const rows = await sql<{ name: string }>`
      select table_name as name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE'
      order by table_name`.execute(loose)
    return rows.rows.map((r) => r.name)
  } catch {
    // SQLite has no information_schema
    const rows = await sql<{ name: string }>`
      select name from sqlite_master
      where type = 'table' and name not like 'sqlite_%' order by name`.execute(loose)
    return rows.rows.map((r) => r.name)
  }
}

/** Every row of every table, in a stable order: to prove a request changed nothing. */
export async function snapshotTables(db: Kysely<never> | Kysely<unknown>): Promise<string> {
  const out: Record<string, string[]> = {}
  for (const table of await tableNames(db)) {
    const rows = await sql`select * from ${sql.table(table)}`.execute(db as Kysely<unknown>)
    out[table] = rows.rows.map((r) => JSON.stringify(r)).sort()
  }
  return JSON.stringify(out)
}
