import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  DummyDriver,
  Kysely,
  MysqlAdapter,
  MysqlIntrospector,
  MysqlQueryCompiler,
  sql,
} from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DB } from '../../src/db/database.ts'
import { problemWithDatabaseUrl, redactDatabaseUrl } from '../../src/db/database-url.ts'
import { ENGINES, engineForUrl, engineOf } from '../../src/db/engines.ts'
import { lockForTransaction, lockRowsForWrite } from '../../src/db/locks.ts'
import { storageErrorKind, writeRefusalOf } from '../../src/db/storage-error.ts'

// The engine port (src/db/engine.ts): a URL picks one engine, a database finds its engine
// again from its Kysely adapter, and what differs is asked of the engine, never guessed.

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code })

/** A Kysely on a dialect statusd has no engine for. */
const foreignDb = () =>
  new Kysely<DB>({
    dialect: {
      createAdapter: () => new MysqlAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new MysqlIntrospector(db),
      createQueryCompiler: () => new MysqlQueryCompiler(),
    },
  })

describe('engine registry', () => {
  it('every URL form names exactly one engine, the one that lists it', () => {
    const samples: [string, string][] = [
      ['sqlite:./data/statusd.db', 'sqlite'],
      ['sqlite::memory:', 'sqlite'],
      ['postgres://u@h/db', 'postgres'],
      ['postgresql://u@h/db', 'postgres'],
    ]
    for (const [url, name] of samples) {
      const engines = Object.values(ENGINES).filter((e) => e.recognizes(url))
      assert.deepEqual(
        engines.map((e) => e.name),
        [name],
        url,
      )
      assert.equal(engineForUrl(url)?.name, name)
    }
    assert.equal(engineForUrl('mysql://h/db'), undefined)
    for (const [key, engine] of Object.entries(ENGINES)) assert.equal(engine.name, key)
  })

  it('a database finds its engine from its adapter, without connecting', async () => {
    for (const url of ['sqlite::memory:', 'postgres://nobody@127.0.0.1:1/none']) {
      const database = createDatabase(url, { poolSize: 1 })
      try {
        assert.equal(engineOf(database.db).name, database.engine)
        assert.equal(engineOf(database.db), engineForUrl(url))
      } finally {
        await database.close()
      }
    }
  })

  it('a database no engine owns is refused, not served without its locks', async () => {
    const db = foreignDb()
    assert.throws(() => engineOf(db), /no engine of statusd runs on MysqlAdapter/)
    assert.throws(() => lockRowsForWrite(db, db.selectFrom('statuses').selectAll()), /no engine/)
    await assert.rejects(
      db.transaction().execute((tx) => lockForTransaction(tx, 'x')),
      /no engine/,
    )
  })
})

describe('row locks and advisory locks, per engine', () => {
  it('a row read to be written: for update on PostgreSQL, the query as it is on SQLite', async () => {
    const compiled: Record<string, string> = {}
    for (const url of ['sqlite::memory:', 'postgres://nobody@127.0.0.1:1/none']) {
      const database = createDatabase(url, { poolSize: 1 })
      const { db } = database
      compiled[database.engine] = lockRowsForWrite(
        db,
        db.selectFrom('statuses').selectAll().where('id', '=', 'x'),
      ).compile().sql
      await database.close()
    }
    assert.match(String(compiled.postgres), / for update$/)
    assert.doesNotMatch(String(compiled.sqlite), /for update/)
  })

  it('SQLite takes no advisory lock: its write transaction holds the one write lock', async () => {
    const database = createDatabase('sqlite::memory:')
    const ran: string[] = []
    const db = database.db.withPlugin({
      transformQuery: (args) => {
        ran.push(args.node.kind)
        return args.node
      },
      transformResult: async (args) => args.result,
    })
    await db.transaction().execute(async (tx) => {
      await lockForTransaction(tx, 'statusd:first-user')
      await sql`select 1`.execute(tx)
    })
    assert.deepEqual(ran, ['RawNode'], 'only the select ran')
    await database.close()
  })
})

describe('what an error means for storage', () => {
  const cases: [string, unknown, ReturnType<typeof storageErrorKind>][] = [
    ['SQLite busy', withCode('SQLITE_BUSY'), 'unavailable'],
    ['disk full while syncing the log', withCode('ENOSPC'), 'unavailable'],
    ['server shutting down', withCode('57P01'), 'unavailable'],
    ['wrapped outage', new Error('query failed', { cause: withCode('ECONNRESET') }), 'unavailable'],
    ['text holding NUL', withCode('22021'), 'unstorable'],
    ['no such database', withCode('3D000'), 'setup'],
    ['no such schema', withCode('3F000'), 'setup'],
    ['password refused', withCode('28P01'), 'setup'],
    ['privilege missing', withCode('42501'), 'setup'],
    ['unique violation', withCode('23505'), undefined],
    ['SQLite constraint', withCode('SQLITE_CONSTRAINT_UNIQUE'), undefined],
    ['a bug', new Error('boom'), undefined],
    ['not an error', 'boom', undefined],
  ]
  for (const [name, err, kind] of cases)
    it(`${name}: ${kind ?? 'a bug'}`, () => assert.equal(storageErrorKind(err), kind))
})

describe('why storage refused a write (full, read-only: /readyz reports it)', () => {
  const cases: [string, unknown, ReturnType<typeof writeRefusalOf>][] = [
    ['SQLite full', withCode('SQLITE_FULL'), 'full'],
    ['disk full while syncing the log', withCode('ENOSPC'), 'full'],
    ['quota exceeded', withCode('EDQUOT'), 'full'],
    ['PostgreSQL disk full', withCode('53100'), 'full'],
    ['SQLite read-only', withCode('SQLITE_READONLY'), 'readOnly'],
    ['SQLite read-only, extended code', withCode('SQLITE_READONLY_DBMOVED'), 'readOnly'],
    ['read-only file system', withCode('EROFS'), 'readOnly'],
    ['PostgreSQL read-only transaction', withCode('25006'), 'readOnly'],
    ['wrapped', new Error('commit failed', { cause: withCode('SQLITE_FULL') }), 'full'],
    ['SQLite busy', withCode('SQLITE_BUSY'), undefined],
    ['server unreachable', withCode('ECONNREFUSED'), undefined],
    ['a bug', new Error('boom'), undefined],
  ]
  for (const [name, err, why] of cases)
    it(`${name}: ${why ?? 'not a refusal'}`, () => assert.equal(writeRefusalOf(err), why))

  it('a read-only PostgreSQL transaction is also unavailable (503), not a bug', () =>
    assert.equal(storageErrorKind(withCode('25006')), 'unavailable'))
})

describe('database URLs', () => {
  it('are shown without their password; a path is shown as it is', () => {
    assert.equal(
      redactDatabaseUrl('postgresql://me:secret@db:5432/statusd?sslmode=require'),
      'postgresql://me:***@db:5432/statusd?sslmode=require',
    )
    assert.equal(redactDatabaseUrl('sqlite:./data/statusd.db'), 'sqlite:./data/statusd.db')
    assert.doesNotMatch(redactDatabaseUrl('mysql://me:secret@db/x'), /secret/)
  })

  it('a URL no engine opens is named by its scheme alone, with the forms that work', () => {
    assert.equal(
      problemWithDatabaseUrl('mysql://me:secret@db/x'),
      'DATABASE_URL must be sqlite:<path> or postgres://…, got a "mysql:" URL',
    )
    assert.equal(problemWithDatabaseUrl('sqlite:./x.db'), undefined)
    assert.equal(problemWithDatabaseUrl('postgres://u@h/db'), undefined)
  })
})
