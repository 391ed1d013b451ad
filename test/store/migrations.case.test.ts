import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { createDatabase } from '../../src/db/create-db.ts'
import type { DB } from '../../src/db/database.ts'
import { migrateToLatest, migratorFor, pendingMigrations } from '../../src/db/migrate.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { freshDatabase, TEST_ENGINE } from '../helpers/engine.ts'
import { onEngine } from '../helpers/store.ts'
import { statusRow, userRow } from './fixtures.ts'

const ALL = Object.keys(migrations).sort()
// statusd's first tables; later migrations add more, which the checks below allow for
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
  it('apply in order on an empty database; a second run has nothing to do', async () => {
    const fresh = await freshDatabase()
    const database = createDatabase(fresh.url)
    try {
      assert.deepEqual(await pendingMigrations(database.db), ALL)
      assert.deepEqual(await migrateToLatest(database.db), ALL)
      assert.deepEqual(await pendingMigrations(database.db), [])
      assert.deepEqual(await migrateToLatest(database.db), [])
      hasCoreTables(await tablesOf(database.db))
    } finally {
      await database.close()
      await fresh.drop()
    }
  })

  it('migrate down to nothing and up again', async () => {
    const fresh = await freshDatabase()
    const database = createDatabase(fresh.url)
    try {
      await migrateToLatest(database.db)
      const migrator = await migratorFor(database.db)
      for (let i = 0; i < ALL.length; i++) {
        const { error } = await migrator.migrateDown()
        assert.equal(error, undefined)
      }
      // note: this database's own tables only; other tests' schemas may exist beside it
      assert.deepEqual(await tablesOf(database.db), [])
      assert.deepEqual(await migrateToLatest(database.db), ALL)
    } finally {
      await database.close()
      await fresh.drop()
    }
  })

  it('instances migrating one database at once: one applies, the others find nothing to do', {
    skip: TEST_ENGINE === 'sqlite' && 'several instances share one database only on PostgreSQL',
  }, async () => {
    const fresh = await freshDatabase()
    const instances = Array.from({ length: 4 }, () => createDatabase(fresh.url, { poolSize: 2 }))
    try {
      const applied = await Promise.all(instances.map((d) => migrateToLatest(d.db)))
      assert.deepEqual(applied.flat().sort(), ALL, 'each migration applied exactly once')
      hasCoreTables(await userTables(fresh.url))
    } finally {
      for (const d of instances) await d.close()
      await fresh.drop()
    }
  })

  it("another schema's tables and migration bookkeeping do not confuse statusd's", {
    skip: TEST_ENGINE === 'sqlite' && 'schemas exist only on PostgreSQL',
  }, async () => {
    // two statusd databases side by side in one PostgreSQL database, one per schema
    const [a, b] = [await freshDatabase(), await freshDatabase()]
    const [da, db] = [createDatabase(a.url), createDatabase(b.url)]
    try {
      assert.deepEqual(await migrateToLatest(da.db), ALL)
      assert.deepEqual(await migrateToLatest(db.db), ALL, 'the second schema is migrated too')
      hasCoreTables(await userTables(b.url))
    } finally {
      await da.close()
      await db.close()
      await a.drop()
      await b.drop()
    }
  })
})

describe(onEngine('migration 2026-11-24T000000-clustered-history'), () => {
  const BEFORE = '2026-11-23T000000-sharing'
  const NAME = '2026-11-24T000000-clustered-history'

  /** Whether status_history is stored WITHOUT ROWID (SQLite's `pragma table_list`). */
  const withoutRowid = async (db: Kysely<DB>) =>
    (await sql<{ wr: number }>`select wr from pragma_table_list('status_history')`.execute(db))
      .rows[0]?.wr === 1

  const historyOf = (db: Kysely<DB>) =>
    db.selectFrom('status_history').selectAll().orderBy('status_id').orderBy('change_no').execute()

  it('keeps every history row, up and down, and clusters the table on SQLite only', async () => {
    const fresh = await freshDatabase()
    const database = createDatabase(fresh.url)
    const { db } = database
    try {
      const migrator = await migratorFor(db)
      assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
      const user = userRow()
      await db.insertInto('users').values(user).execute()
      const statuses = [statusRow(user.id), statusRow(user.id)]
      await db.insertInto('statuses').values(statuses).execute()
      // interleaved, as writes arrive on a real server
      const rows = Array.from({ length: 40 }, (_, i) => ({
        status_id: (statuses[i % 2] as { id: string }).id,
        change_no: Math.floor(i / 2) + 1,
        value: `v${i}`,
        at: new Date(Date.UTC(2026, 10, 24, 0, 0, i)).toISOString(),
        by_user_id: user.id,
      }))
      await db.insertInto('status_history').values(rows).execute()
      const before = await historyOf(db)
      assert.equal(before.length, 40)

      assert.deepEqual(await migrateToLatest(db), [NAME])
      assert.deepEqual(await historyOf(db), before, 'every row kept by the rebuild')
      if (TEST_ENGINE === 'sqlite') assert.equal(await withoutRowid(db), true)
      // the primary key still holds, and deleting a status still takes its history along
      await assert.rejects(
        db
          .insertInto('status_history')
          .values(rows[0] as never)
          .execute(),
      )
      await db
        .deleteFrom('statuses')
        .where('id', '=', (statuses[0] as { id: string }).id)
        .execute()
      assert.equal(
        (await historyOf(db)).length,
        20,
        'the cascade removed the deleted status’s rows',
      )

      assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
      assert.equal((await historyOf(db)).length, 20, 'down keeps the rows too')
      if (TEST_ENGINE === 'sqlite') assert.equal(await withoutRowid(db), false)
    } finally {
      await database.close()
      await fresh.drop()
    }
  })
})
