import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DB } from '../../src/db/database.ts'
import { migrateToLatest, migratorFor, pendingMigrations } from '../../src/db/migrate.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { openDatabase } from '../helpers/database.ts'
import { TEST_ENGINE, testDatabase } from '../helpers/engine.ts'
import { onEngine } from '../helpers/store.ts'
import { oldKeyRow, oldStatusRow, oldUserRow, statusRow } from './fixtures.ts'

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

describe(onEngine('migration 2026-11-24T000000-clustered-history'), () => {
  const BEFORE = '2026-11-23T000000-sharing'
  const NAME = '2026-11-24T000000-clustered-history'

  /** Whether status_history is stored WITHOUT ROWID (SQLite's `pragma table_list`). */
  const withoutRowid = async (db: Kysely<DB>) =>
    (await sql<{ wr: number }>`select wr from pragma_table_list('status_history')`.execute(db))
      .rows[0]?.wr === 1

  const historyOf = (db: Kysely<DB>) =>
    db.selectFrom('status_history').selectAll().orderBy('status_id').orderBy('change_no').execute()

  it('keeps every history row, up and down, and clusters the table on SQLite only', async (t) => {
    const fresh = await testDatabase(t)
    const database = openDatabase(t, fresh.url)
    const { db } = database
    const migrator = await migratorFor(db)
    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    const user = oldUserRow()
    await db.insertInto('users').values(user).execute()
    const statuses = [oldStatusRow(user.id), oldStatusRow(user.id)]
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

    assert.equal((await migrator.migrateTo(NAME)).error, undefined)
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
    assert.equal((await historyOf(db)).length, 20, 'the cascade removed the deleted status’s rows')

    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    assert.equal((await historyOf(db)).length, 20, 'down keeps the rows too')
    if (TEST_ENGINE === 'sqlite') assert.equal(await withoutRowid(db), false)
  })
})

describe(onEngine('migration 2026-11-24T010000-clustered-statuses'), () => {
  const BEFORE = '2026-11-24T000000-clustered-history'
  const NAME = '2026-11-24T010000-clustered-statuses'

  /** Whether statuses is stored WITHOUT ROWID (SQLite's `pragma table_list`). */
  const withoutRowid = async (db: Kysely<DB>) =>
    (await sql<{ wr: number }>`select wr from pragma_table_list('statuses')`.execute(db)).rows[0]
      ?.wr === 1
  /** The columns of the list's index, statuses_owner_created (SQLite's `pragma index_info`). */
  const listIndexColumns = async (db: Kysely<DB>) =>
    (
      await sql<{ name: string }>`select name from pragma_index_info('statuses_owner_created')
        order by seqno`.execute(db)
    ).rows.map((r) => r.name)
  const foreignKeysOn = async (db: Kysely<DB>) =>
    (await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)).rows[0]?.foreign_keys ===
    1

  const statusesOf = (db: Kysely<DB>) =>
    db.selectFrom('statuses').selectAll().orderBy('id').execute()
  const childrenOf = async (db: Kysely<DB>) => ({
    history: await db
      .selectFrom('status_history')
      .selectAll()
      .orderBy('status_id')
      .orderBy('change_no')
      .execute(),
    roles: await db.selectFrom('status_roles').selectAll().orderBy('status_id').execute(),
  })

  /** A database one migration short of this one, with statuses that have history and roles. */
  async function seeded(db: Kysely<DB>) {
    const migrator = await migratorFor(db)
    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    const owner = oldUserRow()
    const reader = oldUserRow()
    await db.insertInto('users').values([owner, reader]).execute()
    const statuses = [
      oldStatusRow(owner.id, { status_key: 'build', change_count: 3, version: 4 }),
      oldStatusRow(owner.id, { value: null, change_count: 0, value_updated_at: null }),
      oldStatusRow(owner.id, { status_key: 'deploy', description: 'with a description' }),
    ]
    await db.insertInto('statuses').values(statuses).execute()
    const [first, , third] = statuses as [(typeof statuses)[0], unknown, (typeof statuses)[0]]
    await db
      .insertInto('status_history')
      .values(
        [1, 2, 3].map((n) => ({
          status_id: first.id,
          change_no: n,
          value: `v${n}`,
          at: new Date(Date.UTC(2026, 10, 24, 0, 0, n)).toISOString(),
          by_user_id: owner.id,
        })),
      )
      .execute()
    const now = new Date().toISOString()
    await db
      .insertInto('status_roles')
      .values([
        { status_id: first.id, user_id: reader.id, role: 'subscriber', created_at: now },
        { status_id: third.id, user_id: reader.id, role: 'updater', created_at: now },
      ])
      .execute()
    return { migrator, owner, first, third }
  }

  it('keeps every status, history row and role, up and down, and clusters the table on SQLite only', async (t) => {
    const fresh = await testDatabase(t)
    const database = openDatabase(t, fresh.url)
    const { db } = database
    const { migrator, owner, first, third } = await seeded(db)
    const statuses = await statusesOf(db)
    const children = await childrenOf(db)
    assert.equal(statuses.length, 3)

    assert.equal((await migrator.migrateTo(NAME)).error, undefined)
    assert.deepEqual(await statusesOf(db), statuses, 'every status kept by the rebuild')
    assert.deepEqual(await childrenOf(db), children, 'no history row or role lost to the drop')
    if (TEST_ENGINE === 'sqlite') {
      assert.equal(await withoutRowid(db), true)
      assert.equal(await foreignKeysOn(db), true, 'foreign keys are back on')
      // a list page reads the index alone: it carries the columns the page shows
      assert.deepEqual(await listIndexColumns(db), [
        'owner_id',
        'created_at',
        'id',
        'status_key',
        'share_id',
        'name',
      ])
    }

    // the constraints hold on the new table: unique share id, unique key per owner, the
    // owner must exist, history must reference a status
    await assert.rejects(
      db
        .insertInto('statuses')
        .values(oldStatusRow(owner.id, { share_id: first.share_id }))
        .execute(),
    )
    await assert.rejects(
      db
        .insertInto('statuses')
        .values(oldStatusRow(owner.id, { status_key: 'build' }))
        .execute(),
    )
    await assert.rejects(db.insertInto('statuses').values(oldStatusRow('no-such-user')).execute())
    await assert.rejects(
      db
        .insertInto('status_history')
        .values({
          status_id: 'no-such-status',
          change_no: 1,
          value: 'x',
          at: '',
          by_user_id: owner.id,
        })
        .execute(),
    )
    // deleting a status still takes its history and roles along
    await db.deleteFrom('statuses').where('id', '=', first.id).execute()
    const left = await childrenOf(db)
    assert.equal(left.history.length, 0, 'the cascade removed the deleted status’s history')
    assert.deepEqual(
      left.roles.map((r) => r.status_id),
      [third.id],
      'the cascade removed the deleted status’s roles',
    )

    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    assert.equal((await statusesOf(db)).length, 2, 'down keeps the statuses too')
    assert.equal((await childrenOf(db)).roles.length, 1, 'and the roles')
    if (TEST_ENGINE === 'sqlite') {
      assert.equal(await withoutRowid(db), false)
      assert.equal(await foreignKeysOn(db), true)
      assert.deepEqual(await listIndexColumns(db), ['owner_id', 'created_at', 'id'])
    }
  })

  it('refuses to run inside a transaction, where SQLite cannot switch foreign keys off, and changes nothing', async (t) => {
    if (TEST_ENGINE !== 'sqlite') return t.skip('SQLite only: PostgreSQL keeps its table')
    const fresh = await testDatabase(t)
    const database = openDatabase(t, fresh.url)
    const { db } = database
    await seeded(db)
    const statuses = await statusesOf(db)
    const children = await childrenOf(db)
    const { up } = migrations[NAME] as { up: (db: Kysely<unknown>) => Promise<void> }
    await assert.rejects(
      db.transaction().execute((tx) => up(tx as unknown as Kysely<unknown>)),
      /foreign keys could not be switched off/,
    )
    assert.deepEqual(await statusesOf(db), statuses)
    assert.deepEqual(await childrenOf(db), children)
    assert.equal(await withoutRowid(db), false)
    assert.equal(await foreignKeysOn(db), true)
  })
})

describe(onEngine('migration 2026-11-25T000000-api-key-successor'), () => {
  const BEFORE = '2026-11-24T010000-clustered-statuses'
  const NAME = '2026-11-25T000000-api-key-successor'

  it('keeps every key, never rotated (replaced_by null), up and down', async (t) => {
    const fresh = await testDatabase(t)
    const database = openDatabase(t, fresh.url)
    const { db } = database
    const migrator = await migratorFor(db)
    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    const owner = oldUserRow()
    await db.insertInto('users').values(owner).execute()
    const { replaced_by: _, ...key } = oldKeyRow(owner.id, { label: 'ci' })
    await db.insertInto('api_keys').values(key).execute()

    assert.equal((await migrator.migrateTo(NAME)).error, undefined)
    const after = await db.selectFrom('api_keys').selectAll().execute()
    assert.deepEqual(after, [{ ...key, replaced_by: null }])

    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    const [down] = await db.selectFrom('api_keys').selectAll().execute()
    assert.deepEqual(down, key, 'the key is kept, without the column')
  })
})

describe(onEngine('migration 2026-11-25T010000-bigint-counters'), () => {
  const BEFORE = '2026-11-25T000000-api-key-successor'
  const NAME = '2026-11-25T010000-bigint-counters'

  it('a status takes writes past 2^31 (its counters are 64-bit), and comes back as numbers', async (t) => {
    const fresh = await testDatabase(t)
    const database = openDatabase(t, fresh.url)
    const { db } = database
    const migrator = await migratorFor(db)
    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    const owner = oldUserRow()
    await db.insertInto('users').values(owner).execute()
    const status = oldStatusRow(owner.id, { change_count: 2 ** 31 - 1, version: 2 ** 31 - 1 })
    await db.insertInto('statuses').values(status).execute()
    assert.equal((await migrator.migrateTo(NAME)).error, undefined)

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
    const count = await db
      .selectFrom('statuses')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()
    assert.equal(Number(count.n), 1)
  })
})

describe(onEngine('migration 2026-11-28T000000-people'), () => {
  const BEFORE = '2026-11-27T000000-history-sweep'
  const NAME = '2026-11-28T000000-people'

  it('folds e-mail addresses (the older of two case-variants keeps the key), keeps keys with every scope, up and down', async (t) => {
    const fresh = await testDatabase(t)
    const database = openDatabase(t, fresh.url)
    const { db } = database
    const migrator = await migratorFor(db)
    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    const older = oldUserRow({ email: 'Ann@Example.com', created_at: '2026-01-01T00:00:00.000Z' })
    const newer = oldUserRow({ email: 'ann@example.com', created_at: '2026-02-01T00:00:00.000Z' })
    const none = oldUserRow({ email: null })
    const accented = oldUserRow({
      email: 'ÅSA@Example.com',
      created_at: '2026-03-01T00:00:00.000Z',
    })
    await db.insertInto('users').values([older, newer, none, accented]).execute()
    const key = oldKeyRow(older.id, { label: 'ci' })
    await db.insertInto('api_keys').values(key).execute()
    const status = oldStatusRow(older.id)
    await db.insertInto('statuses').values(status).execute()

    assert.equal((await migrator.migrateTo(NAME)).error, undefined)
    const keys = await db
      .selectFrom('users')
      .select(['id', 'email_key'])
      .orderBy('created_at')
      .execute()
    assert.deepEqual(
      keys.map((u) => [u.id, u.email_key]),
      [
        [older.id, 'ann@example.com'],
        [newer.id, null],
        // folded as the service folds it, beyond ASCII (SQLite's lower() would leave the Å)
        [accented.id, 'åsa@example.com'],
        [none.id, null],
      ],
    )
    const [k] = await db.selectFrom('api_keys').select(['scopes', 'status_ids']).execute()
    assert.deepEqual(k, { scopes: null, status_ids: null }, 'a key from before keeps every scope')
    const [s] = await db.selectFrom('statuses').select('listed').execute()
    assert.equal(Number(s?.listed), 0)

    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    const down = await db.selectFrom('users').selectAll().orderBy('created_at').execute()
    assert.deepEqual(
      new Set(down.map((u) => JSON.stringify(u))),
      new Set([older, newer, none, accented].map((u) => JSON.stringify(u))),
      'every user is kept, without the columns',
    )
  })
})

describe(onEngine('migration 2026-11-28T050000-share-links-search'), () => {
  const BEFORE = '2026-11-28T000000-people'
  const NAME = '2026-11-28T050000-share-links-search'

  it('statuses from before have no search name (none was listed), and come back down as they were', async (t) => {
    const fresh = await testDatabase(t)
    const database = openDatabase(t, fresh.url)
    const { db } = database
    const migrator = await migratorFor(db)
    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    const user = oldUserRow()
    await db.insertInto('users').values(user).execute()
    const {
      name_search: _,
      palette: _palette,
      stale_after: _staleAfter,
      stale_at: _staleAt,
      stale_notified_at: _staleNotifiedAt,
      ...status
    } = statusRow(user.id)
    await db.insertInto('statuses').values(status).execute()

    assert.equal((await migrator.migrateTo(NAME)).error, undefined)
    const [up] = await db.selectFrom('statuses').select(['name_search', 'listed']).execute()
    assert.deepEqual({ ...up, listed: Number(up?.listed) }, { name_search: null, listed: 0 })

    assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
    const [down] = await db.selectFrom('statuses').selectAll().execute()
    assert.equal(Object.hasOwn(down ?? {}, 'name_search'), false)
  })
})
