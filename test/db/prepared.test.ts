import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DB } from '../../src/db/database.ts'
import type { Database } from '../../src/db/engine.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { prepareQuery } from '../../src/db/prepared.ts'

// Issue 5 (lean hot path): no per-request query building — a prepared query is compiled
// once per dialect, and each run only binds its values by name.

let database: Database
before(async () => {
  database = createDatabase('sqlite::memory:')
  await migrateToLatest(database.db)
  await database.db
    .insertInto('users')
    .values(
      ['u1', 'u2'].map((id) => ({
        id,
        name: id,
        email: null,
        plan: 'free',
        verified: 1,
        created_at: '2026-01-01T00:00:00.000Z',
      })),
    )
    .execute()
})
after(() => database.close())

function countingBuilds() {
  const counter = { builds: 0 }
  const byName = prepareQuery<{ name: string; plan: string }, { id: string }>((db, p) => {
    counter.builds += 1
    return db
      .selectFrom('users')
      .select('id')
      .where('plan', '=', p('plan'))
      .where('name', '=', p('name'))
      .limit(1)
  })
  return { byName, counter }
}

test('a prepared query is built and compiled once, then binds each run its own values', async () => {
  const { byName, counter } = countingBuilds()
  // note: the parameters are passed in another order than the query uses them
  assert.deepEqual((await byName(database.db, { name: 'u1', plan: 'free' })).rows, [{ id: 'u1' }])
  assert.deepEqual((await byName(database.db, { name: 'u2', plan: 'free' })).rows, [{ id: 'u2' }])
  assert.deepEqual((await byName(database.db, { name: 'u2', plan: 'pro' })).rows, [])
  assert.equal(counter.builds, 1)
})

test('a prepared query keeps the constants of the query (here the limit)', async () => {
  const all = prepareQuery<{ plan: string }, { id: string }>((db, p) =>
    db.selectFrom('users').select('id').where('plan', '=', p('plan')).orderBy('id').limit(1),
  )
  assert.deepEqual((await all(database.db, { plan: 'free' })).rows, [{ id: 'u1' }])
})

test('a prepared query runs inside a transaction, on its connection', async () => {
  const { byName, counter } = countingBuilds()
  await assert.rejects(
    database.db.transaction().execute(async (tx) => {
      await tx.updateTable('users').set({ plan: 'pro' }).where('id', '=', 'u1').execute()
      assert.deepEqual((await byName(tx, { name: 'u1', plan: 'pro' })).rows, [{ id: 'u1' }])
      throw new Error('roll back')
    }),
    /roll back/,
  )
  assert.deepEqual((await byName(database.db, { name: 'u1', plan: 'pro' })).rows, [])
  assert.equal(counter.builds, 1, 'the transaction shares the database dialect')
})

test('a prepared query is compiled once per dialect: each gets its own SQL', async () => {
  const { byName, counter } = countingBuilds()
  const seen: string[] = []
  const postgres = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () =>
        new (class extends DummyDriver {
          override async acquireConnection() {
            return {
              executeQuery: async (query: { sql: string; parameters: readonly unknown[] }) => {
                seen.push(`${query.sql} ${JSON.stringify(query.parameters)}`)
                return { rows: [] }
              },
              streamQuery: () => {
                throw new Error('not used')
              },
            }
          }
        })(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  })
  await byName(database.db, { name: 'u1', plan: 'free' })
  await byName(postgres, { name: 'u1', plan: 'free' })
  await byName(postgres, { name: 'u2', plan: 'pro' })
  assert.equal(counter.builds, 2)
  assert.deepEqual(seen, [
    'select "id" from "users" where "plan" = $1 and "name" = $2 limit $3 ["free","u1",1]',
    'select "id" from "users" where "plan" = $1 and "name" = $2 limit $3 ["pro","u2",1]',
  ])
})

test('in a group-commit batch on SQLite, prepared queries run directly on the connection', async () => {
  const { byName } = countingBuilds()
  // the executor of a batch's transaction is never asked: its statements go straight to SQLite
  const run = (work: (tx: Kysely<DB>) => Promise<unknown>) =>
    database.writer.run(async (tx) => {
      const executeQuery = tx.executeQuery.bind(tx)
      let viaExecutor = 0
      tx.executeQuery = ((query: never) => {
        viaExecutor += 1
        return executeQuery(query)
      }) as typeof tx.executeQuery
      const value = await work(tx)
      return { value, viaExecutor }
    })
  const found = await run(async (tx) => (await byName(tx, { name: 'u2', plan: 'free' })).rows)
  assert.deepEqual(found, { value: [{ id: 'u2' }], viaExecutor: 0 })
  // a failing statement fails its own unit alone, with SQLite's error
  const insert = prepareQuery<{ id: string }, never>((db, p) =>
    db.insertInto('users').values({
      id: p('id'),
      name: 'dup',
      email: null,
      plan: 'free',
      verified: 1,
      created_at: '2026-01-01T00:00:00.000Z',
    }),
  )
  const outcomes = await Promise.allSettled([
    run((tx) => insert(tx, { id: 'u3' })),
    run((tx) => insert(tx, { id: 'u1' })),
  ])
  assert.equal(outcomes[0]?.status, 'fulfilled')
  assert.equal(
    (outcomes[0] as PromiseFulfilledResult<{ value: { numAffectedRows: bigint } }>).value.value
      .numAffectedRows,
    1n,
  )
  assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /UNIQUE constraint/)
  // outside a batch, the same query goes through Kysely (and waits for the connection)
  assert.deepEqual((await byName(database.db, { name: 'dup', plan: 'free' })).rows, [{ id: 'u3' }])
})

test('a batch transaction kept past its commit gets no direct path: Kysely refuses it', async () => {
  const { byName } = countingBuilds()
  let kept: Kysely<DB> | undefined
  await database.writer.run(async (tx) => {
    kept = tx
  })
  await assert.rejects(
    byName(kept as Kysely<DB>, { name: 'u1', plan: 'free' }),
    /committed|rolled back/i,
  )
})
