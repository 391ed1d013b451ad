import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Kysely, sql } from 'kysely'
import { main } from '../../src/cli/main.ts'
import { COPY_TABLES, PRIMARY_KEYS } from '../../src/db/copy.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DB } from '../../src/db/database.ts'
import { defer, type Lifetime } from '../helpers/cleanup.ts'
import { freshDatabase, TEST_ENGINE } from '../helpers/engine.ts'

/**
 * A database of the engine under test that a backup can be taken of: a SQLite file (an
 * in-memory database has none), or a schema of its own on the PostgreSQL server. `lose()`
 * stands for losing it: a new, empty SQLite file, or the schema dropped and made again
 * (a PostgreSQL backup restores into a schema of its name: docs/operations.md#restore).
 */
export async function backedUpDatabase(
  t: Lifetime,
): Promise<{ url: string; dir: string; lose(): Promise<string> }> {
  const dir = mkdtempSync(join(tmpdir(), 'statusd-backups-'))
  defer(t, () => rmSync(dir, { recursive: true, force: true }))
  if (TEST_ENGINE === 'sqlite') {
    let n = 0
    return {
      url: `sqlite:${join(dir, 'statusd.db')}`,
      dir,
      lose: async () => `sqlite:${join(dir, `restored-${++n}.db`)}`,
    }
  }
  const fresh = await freshDatabase()
  defer(t, () => fresh.drop())
  const options = new URL(fresh.url).searchParams.get('options') ?? ''
  const schema = /search_path=(\S+)/.exec(options)?.[1] as string
  return {
    url: fresh.url,
    dir,
    async lose() {
      const database = createDatabase(fresh.url, { poolSize: 1 })
      try {
        await sql`drop schema ${sql.id(schema)} cascade`.execute(database.db)
        await sql`create schema ${sql.id(schema)}`.execute(database.db)
      } finally {
        await database.close()
      }
      return fresh.url
    },
  }
}

/** Every statusd row, table by table, in primary-key order: what "the same data" means. */
export async function dump(db: Kysely<DB>): Promise<Record<string, unknown[]>> {
  const loose = db as unknown as Kysely<Record<string, Record<string, unknown>>>
  const out: Record<string, unknown[]> = {}
  for (const table of COPY_TABLES) {
    let q = loose.selectFrom(table).selectAll()
    for (const k of PRIMARY_KEYS[table]) q = q.orderBy(k)
    out[table] = await q.execute()
  }
  return out
}

/** `dump` of the database at `url`. */
export async function dumpOf(url: string): Promise<Record<string, unknown[]>> {
  const database = createDatabase(url, { poolSize: 1 })
  try {
    return await dump(database.db)
  } finally {
    await database.close()
  }
}

/** Runs `statusd …` in-process on the database at `url` (and `env`); exit code and output. */
export async function statusdOn(
  url: string,
  argv: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  const saved = { ...process.env }
  Object.assign(process.env, { DATABASE_URL: url, ...env })
  let out = ''
  let err = ''
  try {
    const code = await main(
      argv,
      (text) => {
        out += text
      },
      (text) => {
        err += text
      },
    )
    return { code, out, err }
  } finally {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name]
    Object.assign(process.env, saved)
  }
}
