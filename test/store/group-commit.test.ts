import assert from 'node:assert/strict'
import { afterEach, beforeEach, test } from 'node:test'
import { CompiledQuery, type Kysely, sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DB } from '../../src/db/database.ts'
import type { Database } from '../../src/db/engine.ts'
import { groupCommitWriter } from '../../src/db/group-commit.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { isStorageUnavailable } from '../../src/db/storage-error.ts'

// Issue 5: durable group commit — writes arriving together share one transaction (one
// fsync), each keeps its own outcome, and each settles only after the shared commit.

let database: Database
beforeEach(async () => {
  database = createDatabase('sqlite::memory:')
  await migrateToLatest(database.db)
})
afterEach(() => database.close())

/** The database, counting the transactions begun on it (a batch takes the connection once). */
function counting(db: Kysely<DB>) {
  const counter = { transactions: 0 }
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'transaction' || prop === 'connection')
        return () => {
          counter.transactions += 1
          return prop === 'transaction' ? target.transaction() : target.connection()
        }
      return Reflect.get(target, prop, receiver)
    },
  })
  return { db: proxy, counter }
}

const insertUser = (id: string) => async (tx: Kysely<DB>) => {
  await tx
    .insertInto('users')
    .values({
      id,
      name: id,
      email: null,
      plan: 'free',
      verified: 1,
      created_at: '2026-01-01T00:00:00.000Z',
    })
    .execute()
  return id
}

const userIds = async () =>
  (await database.db.selectFrom('users').select('id').orderBy('id').execute()).map((r) => r.id)

test('group commit: writes that arrive together share one transaction, each gets its result', async () => {
  const { db, counter } = counting(database.db)
  const writer = groupCommitWriter(db)
  const results = await Promise.all(['a', 'b', 'c', 'd'].map((id) => writer.run(insertUser(id))))
  assert.deepEqual(results, ['a', 'b', 'c', 'd'])
  assert.equal(counter.transactions, 1)
  assert.deepEqual(await userIds(), ['a', 'b', 'c', 'd'])
})

test('group commit: a failing write is rolled back alone and never fails its neighbours', async () => {
  const writer = groupCommitWriter(database.db)
  const outcomes = await Promise.allSettled([
    writer.run(insertUser('a')),
    writer.run(async (tx) => {
      await insertUser('b')(tx)
      throw new Error('bad request')
    }),
    writer.run(insertUser('a')), // duplicate key: a constraint error, rolled back alone
    writer.run(insertUser('c')),
  ])
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
  )
  assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /bad request/)
  assert.deepEqual(await userIds(), ['a', 'c'])
})

test('group commit: when the shared commit fails, every write of the batch fails and none persists', async () => {
  const writer = groupCommitWriter(database.db)
  const outcomes = await Promise.allSettled([
    writer.run(insertUser('a')),
    writer.run(async (tx) => {
      // a foreign key checked only at commit: the commit of the whole batch fails
      await sql`pragma defer_foreign_keys = on`.execute(tx)
      await tx
        .insertInto('api_keys')
        .values({
          id: 'k',
          user_id: 'nobody',
          prefix: 'sdk_x',
          key_hash: 'h',
          label: null,
          created_at: '2026-01-01T00:00:00.000Z',
          expires_at: null,
          revoked_at: null,
        })
        .execute()
    }),
    writer.run(insertUser('b')),
  ])
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['rejected', 'rejected', 'rejected'],
  )
  assert.deepEqual(await userIds(), [])
  // the writer recovers: the next batch commits
  await writer.run(insertUser('z'))
  assert.deepEqual(await userIds(), ['z'])
})

test('group commit: writes queued while a batch commits form the next batch', async () => {
  const { db, counter } = counting(database.db)
  const writer = groupCommitWriter(db, { maxBatch: 2 })
  await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => writer.run(insertUser(id))))
  assert.equal(counter.transactions, 3, 'batches of at most 2')
  assert.deepEqual(await userIds(), ['a', 'b', 'c', 'd', 'e'])
})

test('group commit: when SQLite rolls the whole transaction back, every write fails with the cause', async () => {
  const writer = groupCommitWriter(database.db)
  const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
  const outcomes = await Promise.allSettled([
    writer.run(insertUser('a')),
    writer.run(async (tx) => {
      // what SQLite does on SQLITE_FULL: the transaction is gone, savepoints with it
      await sql`rollback`.execute(tx)
      throw full
    }),
    writer.run(insertUser('b')),
  ])
  assert.deepEqual(
    outcomes.map((o) => (o.status === 'rejected' ? (o.reason as { code?: string }).code : 'ok')),
    ['SQLITE_FULL', 'SQLITE_FULL', 'SQLITE_FULL'],
  )
  assert.deepEqual(await userIds(), [])
  await writer.run(insertUser('z'))
  assert.deepEqual(await userIds(), ['z'])
})

test('group commit: no write settles before its batch is durable; later batches run meanwhile', async () => {
  const syncs: { units: number; done: () => void }[] = []
  const writer = groupCommitWriter(database.db, {
    maxBatch: 2,
    hooks: {
      afterCommit: (units) => new Promise<void>((done) => syncs.push({ units, done })),
    },
  })
  const settled: string[] = []
  const runs = ['a', 'b', 'c'].map((id) =>
    writer.run(insertUser(id)).then((value) => settled.push(value)),
  )
  // both batches commit while the first one's sync is still pending
  while (syncs.length < 2) await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(
    syncs.map((s) => s.units),
    [2, 1],
  )
  assert.deepEqual(settled, [], 'nothing is acknowledged before its sync')
  assert.deepEqual(await userIds(), ['a', 'b', 'c'], 'committed, not yet acknowledged')
  syncs[0]?.done()
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(settled, ['a', 'b'])
  syncs[1]?.done()
  await Promise.all(runs)
  assert.deepEqual(settled, ['a', 'b', 'c'])
})

test('group commit: when a batch cannot be made durable, its writes fail with the cause (503), failed ones keep theirs', async () => {
  const eio = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
  const writer = groupCommitWriter(database.db, {
    hooks: { afterCommit: async () => Promise.reject(eio) },
  })
  const outcomes = await Promise.allSettled([
    writer.run(insertUser('a')),
    writer.run(async () => {
      throw new Error('bad request')
    }),
  ])
  assert.deepEqual(
    outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'ok')),
    ['EIO: i/o error, fdatasync', 'bad request'],
  )
  assert.equal(isStorageUnavailable(eio), true)
})

test('group commit: a batch runs between its enter and leave statements, on its own connection', async () => {
  const synchronous = async (db: Kysely<DB>) =>
    Number(
      Object.values(
        (await sql<Record<string, unknown>>`pragma synchronous`.execute(db)).rows[0] ?? {},
      )[0],
    )
  const writer = groupCommitWriter(database.db, {
    hooks: {
      enter: CompiledQuery.raw('pragma synchronous = NORMAL'),
      leave: CompiledQuery.raw('pragma synchronous = FULL'),
    },
  })
  const inside = await writer.run((tx) => synchronous(tx))
  assert.equal(inside, 1, 'NORMAL inside the batch')
  assert.equal(await synchronous(database.db), 2, 'FULL again for every other write')
  // and after a batch that failed
  await assert.rejects(
    writer.run(async () => Promise.reject(new Error('no'))),
    /no/,
  )
  assert.equal(await synchronous(database.db), 2)
})
