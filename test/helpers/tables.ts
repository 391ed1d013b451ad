import { type Kysely, sql } from 'kysely'

/** Every table of a SQLite database (new tables included as migrations add them). */
export async function tableNames(db: Kysely<never> | Kysely<unknown>): Promise<string[]> {
  const rows = await sql<{
    name: string
  }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(
    db as Kysely<unknown>,
  )
  return rows.rows.map((r) => r.name)
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
