import { type Kysely, sql } from 'kysely'

/**
 * Every table of the database under test (new tables included as migrations add them), on
 * either engine: SQLite's catalogue, or PostgreSQL's current schema (each test has its own).
 * Not PostgreSQL's rate_limit_counters: every request counts there, refused ones too; they
 * are counts, not data a request changes.
 */
export async function tableNames(db: Kysely<never> | Kysely<unknown>): Promise<string[]> {
  return (await listTables(db as Kysely<unknown>)).names
}

async function listTables(db: Kysely<unknown>): Promise<{ names: string[]; postgres: boolean }> {
  try {
    // note: pg_catalog, not information_schema, whose privilege checks make it slow
    const rows = await sql<{ name: string }>`
      select c.relname as name from pg_catalog.pg_class c
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p')
        and c.relname <> 'rate_limit_counters'
      order by c.relname`.execute(db)
    return { names: rows.rows.map((r) => r.name), postgres: true }
  } catch {
    // SQLite has no pg_catalog
    const rows = await sql<{ name: string }>`
      select name from sqlite_master
      where type = 'table' and name not like 'sqlite_%' order by name`.execute(db)
    return { names: rows.rows.map((r) => r.name), postgres: false }
  }
}

/** Every row of every table, in a stable order: to prove a request changed nothing. */
export async function snapshotTables(db: Kysely<never> | Kysely<unknown>): Promise<string> {
  const loose = db as Kysely<unknown>
  const { names, postgres } = await listTables(loose)
  const out: Record<string, string[]> = Object.fromEntries(names.map((name) => [name, []]))
  if (postgres && names.length > 0) {
    // one round trip for all the tables (the fuzz test takes a snapshot per request)
    const rows = await sql<{ t: string; r: string }>`${sql.join(
      names.map(
        (name) =>
          sql`select ${name}::text as t, row_to_json(x)::text as r from ${sql.table(name)} x`,
      ),
      sql` union all `,
    )}`.execute(loose)
    for (const row of rows.rows) out[row.t]?.push(row.r)
  } else {
    for (const name of names) {
      const rows = await sql`select * from ${sql.table(name)}`.execute(loose)
      out[name] = rows.rows.map((r) => JSON.stringify(r))
    }
  }
  for (const rows of Object.values(out)) rows.sort()
  return JSON.stringify(out)
}
