import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { main } from '../../src/cli/main.ts'
import { migratorFor, PRE_RELEASE_MIGRATIONS } from '../../src/db/migrate.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { openDatabase } from '../helpers/database.ts'
import {
  freshDatabase,
  postgresOnly,
  TEST_DATABASE_URL,
  TEST_ENGINE,
  type TestDatabase,
  withSearchPath,
} from '../helpers/engine.ts'

describe(`statusd migrate [${TEST_ENGINE}]`, () => {
  let target: TestDatabase
  let dir: string
  const saved = process.env.DATABASE_URL
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'statusd-migrate-'))
    target =
      TEST_ENGINE === 'sqlite'
        ? { url: `sqlite:${join(dir, 'statusd.db')}`, drop: async () => {} }
        : await freshDatabase()
    process.env.DATABASE_URL = target.url
  })
  after(async () => {
    if (saved === undefined) delete process.env.DATABASE_URL
    else process.env.DATABASE_URL = saved
    await target.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  const migrate = async () => {
    let out = ''
    const code = await main(['migrate', '--json'], (t) => {
      out += t
      return true
    })
    assert.equal(code, 0)
    return JSON.parse(out).applied as string[]
  }

  it('names the migrations it applied to an empty database', async () => {
    assert.deepEqual(await migrate(), Object.keys(migrations).sort())
  })

  it('applies nothing the second time', async () => {
    assert.deepEqual(await migrate(), [])
  })

  it('a database a newer statusd migrated (a downgrade) is refused in one line, unchanged', async (ctx) => {
    const database = openDatabase(ctx, target.url)
    const future = '2099-01-01T000000-from-a-newer-version'
    const newer = await migratorFor(database.db, {
      ...migrations,
      [future]: { up: async () => {} },
    })
    assert.equal((await newer.migrateToLatest()).error, undefined)
    let out = ''
    let err = ''
    const code = await main(
      ['migrate'],
      (t) => {
        out += t
        return true
      },
      (t) => {
        err += t
        return true
      },
    )
    assert.equal(code, 1)
    assert.equal(out, '')
    assert.match(
      err,
      /^statusd: the database was migrated by a newer statusd \(migration 2099-01-01T000000-from-a-newer-version is unknown/,
    )
    assert.match(err, /^[^\n]+\n$/, 'one line, no stack trace')
  })

  it('a database a pre-release left part-way migrated is refused in one line, unchanged', async (ctx) => {
    const database = openDatabase(ctx, target.url)
    // the bookkeeping of a pre-release that applied its first two migrations only
    await sql`delete from kysely_migration`.execute(database.db)
    for (const name of PRE_RELEASE_MIGRATIONS.slice(0, 2))
      await sql`insert into kysely_migration (name, timestamp)
        values (${name}, ${new Date().toISOString()})`.execute(database.db)
    let err = ''
    const code = await main(
      ['migrate'],
      () => true,
      (t) => {
        err += t
        return true
      },
    )
    assert.equal(code, 1)
    assert.match(
      err,
      /^statusd: the database was made by a pre-release of statusd that did not finish its migrations \(2026-11-23T000000-sharing was never applied\): /,
    )
    assert.match(err, /^[^\n]+\n$/, 'one line, no stack trace')
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(database.db)
    assert.equal(rows.rows.length, 2, 'its bookkeeping is as it was')
  })
})

describe('statusd migrate on a PostgreSQL database set up wrong: one line, no stack trace', {
  skip: postgresOnly,
}, () => {
  const saved = process.env.DATABASE_URL
  after(() => {
    if (saved === undefined) delete process.env.DATABASE_URL
    else process.env.DATABASE_URL = saved
  })

  const migrateOn = async (url: string) => {
    process.env.DATABASE_URL = url
    let err = ''
    const code = await main(
      ['migrate'],
      () => true,
      (t) => {
        err += t
        return true
      },
    )
    return { code, err }
  }

  it('a search_path naming no schema that exists', async () => {
    const r = await migrateOn(withSearchPath(TEST_DATABASE_URL ?? '', 'no_such_schema_here'))
    assert.equal(r.code, 1)
    assert.match(r.err, /^statusd: cannot use the database: no schema of its search_path exists/)
    assert.match(r.err, /^[^\n]+\n$/, 'one line')
  })

  it('a database that does not exist', async () => {
    const url = new URL(TEST_DATABASE_URL ?? '')
    url.pathname = '/statusd_no_such_database'
    const r = await migrateOn(url.href)
    assert.equal(r.code, 1)
    assert.match(
      r.err,
      /^statusd: cannot use the database: database "statusd_no_such_database" does not exist\n$/,
    )
  })
})
