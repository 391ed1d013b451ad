import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DB } from '../../src/db/database.ts'
import {
  executedMigrations,
  migrateToLatest,
  migratorFor,
  PRE_RELEASE_MIGRATIONS,
  PreReleaseDatabaseError,
  pendingMigrations,
} from '../../src/db/migrate.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { openDatabase } from '../helpers/database.ts'
import { TEST_ENGINE, testDatabase } from '../helpers/engine.ts'
import { onEngine } from '../helpers/store.ts'
import { snapshotTables } from '../helpers/tables.ts'
import { keyRow, statusRow, userRow } from './fixtures.ts'

const ALL = Object.keys(migrations).sort()
const INITIAL = ALL[0] as string
// statusd's core tables; the schema has more, which the checks below allow for
const CORE_TABLES = ['api_keys', 'status_history', 'statuses', 'users']
const hasCoreTables = (tables: string[]) =>
  assert.deepEqual(
    CORE_TABLES.filter((t) => tables.includes(t)),
    CORE_TABLES,
    `tables: ${tables.join(', ')}`,
  )

/** statusd's tables in this database (on PostgreSQL: in the schema the URL selects). */
async function tablesOf(db: Kysely<DB>): Promise<string[]> {
  const schema =
    TEST_ENGINE === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
      : undefined
  const tables = await db.introspection.getTables()
  return tables
    .filter((t) => schema === undefined || t.schema === schema)
    .map((t) => t.name)
    .sort()
}

async function userTables(url: string): Promise<string[]> {
  const database = createDatabase(url)
  try {
    return await tablesOf(database.db)
  } finally {
    await database.close()
  }
}

describe(onEngine('migrations'), () => {
  it('apply in order on an empty database; a second run has nothing to do', async (t) => {
    const fresh = await testDatabase(t)
    const database = openDatabase(t, fresh.url)
    assert.deepEqual(await pendingMigrations(database.db), ALL)
    assert.deepEqual(await migrateToLatest(database.db), ALL)
    assert.deepEqual(await pendingMigrations(database.db), [])
    assert.deepEqual(await migrateToLatest(database.db), [])
    hasCoreTables(await tablesOf(database.db))
  })

  it('migrate down to nothing and up again', async (t) => {
    const fresh = await testDatabase(t)
    const database = openDatabase(t, fresh.url)
    await migrateToLatest(database.db)
    const migrator = await migratorFor(database.db)
    for (let i = 0; i < ALL.length; i++) {
      const { error } = await migrator.migrateDown()
      assert.equal(error, undefined)
    }
    // note: this database's own tables only; other tests' schemas may exist beside it
    assert.deepEqual(await tablesOf(database.db), [])
    assert.deepEqual(await migrateToLatest(database.db), ALL)
  })

  it('instances migrating one database at once: one applies, the others find nothing to do', {
    skip: TEST_ENGINE === 'sqlite' && 'several instances share one database only on PostgreSQL',
  }, async (t) => {
    const fresh = await testDatabase(t)
    const instances = Array.from({ length: 4 }, () => openDatabase(t, fresh.url, { poolSize: 2 }))
    const applied = await Promise.all(instances.map((d) => migrateToLatest(d.db)))
    assert.deepEqual(applied.flat().sort(), ALL, 'each migration applied exactly once')
    hasCoreTables(await userTables(fresh.url))
  })

  it("another schema's tables and migration bookkeeping do not confuse statusd's", {
    skip: TEST_ENGINE === 'sqlite' && 'schemas exist only on PostgreSQL',
  }, async (t) => {
    // two statusd databases side by side in one PostgreSQL database, one per schema
    const [a, b] = [await testDatabase(t), await testDatabase(t)]
    const [da, db] = [openDatabase(t, a.url), openDatabase(t, b.url)]
    assert.deepEqual(await migrateToLatest(da.db), ALL)
    assert.deepEqual(await migrateToLatest(db.db), ALL, 'the second schema is migrated too')
    hasCoreTables(await userTables(b.url))
  })
})

describe(onEngine('the initial schema'), () => {
  it('a status takes writes past 2^31 (its counters are 64-bit), and comes back as numbers', async (t) => {
    const fresh = await testDatabase(t)
    const { db } = openDatabase(t, fresh.url)
    await migrateToLatest(db)
    const owner = userRow()
    await db.insertInto('users').values(owner).execute()
    const status = statusRow(owner.id, { change_count: 2 ** 31 - 1, version: 2 ** 31 - 1 })
    await db.insertInto('statuses').values(status).execute()

    await db
      .updateTable('statuses')
      .set((eb) => ({ change_count: eb('change_count', '+', 1), version: eb('version', '+', 1) }))
      .where('id', '=', status.id)
      .execute()
    await db
      .insertInto('status_history')
      .values({
        status_id: status.id,
        change_no: 2 ** 31,
        value: 'ON',
        at: status.updated_at,
        by_user_id: owner.id,
      })
      .execute()
    const after = await db
      .selectFrom('statuses')
      .select(['change_count', 'version'])
      .executeTakeFirstOrThrow()
    assert.deepEqual(after, { change_count: 2 ** 31, version: 2 ** 31 })
    const entry = await db
      .selectFrom('status_history')
      .select('change_no')
      .executeTakeFirstOrThrow()
    assert.equal(entry.change_no, 2 ** 31)
  })

  it('statuses and history are stored in key order on SQLite, and an owner’s list page is read from its index alone', {
    skip: TEST_ENGINE !== 'sqlite' && 'PostgreSQL keeps heap tables',
  }, async (t) => {
    const fresh = await testDatabase(t)
    const { db } = openDatabase(t, fresh.url)
    await migrateToLatest(db)
    const withoutRowid = async (table: string) =>
      (await sql<{ wr: number }>`select wr from pragma_table_list(${table})`.execute(db)).rows[0]
        ?.wr === 1
    assert.equal(await withoutRowid('statuses'), true)
    assert.equal(await withoutRowid('status_history'), true)
    const listIndex = await sql<{ name: string }>`select name
      from pragma_index_info('statuses_owner_created') order by seqno`.execute(db)
    assert.deepEqual(
      listIndex.rows.map((r) => r.name),
      ['owner_id', 'created_at', 'id', 'status_key', 'share_id', 'name'],
    )
  })
})

describe(onEngine('a database a pre-release of statusd made'), () => {
  /** Every row of every table but the migrator's own. */
  const dataOf = async (db: Kysely<DB>) => {
    const tables = JSON.parse(await snapshotTables(db as unknown as Kysely<unknown>))
    for (const name of Object.keys(tables)) if (name.startsWith('kysely_')) delete tables[name]
    return tables
  }

  /**
   * A database as a pre-release left it, having applied `applied` of its migrations: the
   * initial schema (which the whole pre-release chain ends in, docs/operations.md#migrations)
   * under the pre-release's bookkeeping, with a user, a key, a status and its history.
   */
  async function preRelease(t: Parameters<typeof testDatabase>[0], applied: readonly string[]) {
    const fresh = await testDatabase(t)
    const { db } = openDatabase(t, fresh.url)
    const { error } = await (await migratorFor(db)).migrateTo(INITIAL)
    assert.equal(error, undefined)
    const {
      admin: _,
      disabled_at: __,
      locale: ___,
      ...owner
    } = userRow({ email: 'Ann@Example.com' })
    await db.insertInto('users').values(owner).execute()
    await db.insertInto('api_keys').values(keyRow(owner.id)).execute()
    // the row as the initial schema has it: without the columns later migrations add
    const {
      value_until: _u,
      value_after: _a,
      value_until_by: _b,
      ...status
    } = statusRow(owner.id, { status_key: 'door' })
    await db.insertInto('statuses').values(status).execute()
    await db
      .insertInto('status_history')
      .values({
        status_id: status.id,
        change_no: 1,
        value: 'ON',
        at: status.updated_at,
        by_user_id: owner.id,
      })
      .execute()
    await sql`delete from kysely_migration`.execute(db)
    for (const [i, name] of applied.entries())
      await sql`insert into kysely_migration (name, timestamp)
        values (${name}, ${new Date(Date.UTC(2026, 10, 22, 0, i)).toISOString()})`.execute(db)
    return db
  }

  it('migrated to its end: recorded as the initial migration, every row kept, the later ones applied', async (t) => {
    const db = await preRelease(t, PRE_RELEASE_MIGRATIONS)
    const before = await dataOf(db)
    assert.deepEqual(await migrateToLatest(db), ALL, 'the initial migration counts as applied')
    assert.deepEqual(await executedMigrations(db), ALL, 'the pre-release’s bookkeeping is gone')
    assert.deepEqual(await dataOf(db), {
      ...before,
      // the operators' migration: the first user is the first operator; the locale's: no
      // language chosen
      users: before.users.map((u: string) =>
        JSON.stringify({ ...JSON.parse(u), admin: 1, disabled_at: null, locale: null }),
      ),
      security_events: [],
      // the ends' migration: no status has an end, no history entry was written by the worker
      statuses: before.statuses.map((s: string) =>
        JSON.stringify({
          ...JSON.parse(s),
          value_until: null,
          value_after: null,
          value_until_by: null,
        }),
      ),
      status_history: before.status_history.map((h: string) =>
        JSON.stringify({ ...JSON.parse(h), via: null }),
      ),
      // the schedules' migration: no status has one yet
      status_schedules: [],
      // the MQTT migration: no lease is held yet
      leases: [],
    })
    assert.deepEqual(await migrateToLatest(db), [], 'the next start has nothing to do')
  })

  it('stopped part way: refused, naming the first migration it lacks, and unchanged', async (t) => {
    const applied = PRE_RELEASE_MIGRATIONS.slice(0, 9)
    const db = await preRelease(t, applied)
    const before = await dataOf(db)
    await assert.rejects(
      migrateToLatest(db),
      (err) =>
        err instanceof PreReleaseDatabaseError &&
        err.message.includes(`(${PRE_RELEASE_MIGRATIONS[9]} was never applied)`),
    )
    assert.deepEqual(await executedMigrations(db), [...applied].sort())
    assert.deepEqual(await dataOf(db), before)
  })
})
