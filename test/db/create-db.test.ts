import assert from 'node:assert/strict'
import { describe, it, test } from 'node:test'
import { sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import { redactDatabaseUrl } from '../../src/db/database-url.ts'
import { openPostgres } from '../../src/db/postgres/open-postgres.ts'
import { isPostgresUrl } from '../../src/db/postgres/postgres-engine.ts'
import { isStorageUnavailable } from '../../src/db/storage-error.ts'
import { defer } from '../helpers/cleanup.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code })

describe('isStorageUnavailable: storage outages are 503, bugs are 500', () => {
  const unavailable: [string, unknown][] = [
    ['SQLite busy', withCode('SQLITE_BUSY')],
    ['SQLite extended I/O code', withCode('SQLITE_IOERR_WRITE')],
    ['connection refused', withCode('ECONNREFUSED')],
    ['connection reset', withCode('ECONNRESET')],
    ['host unreachable', withCode('EHOSTUNREACH')],
    [
      'admin shutdown (57P01)',
      withCode('57P01', 'terminating connection due to administrator command'),
    ],
    ['cannot connect now (57P03)', withCode('57P03', 'the database system is starting up')],
    ['connection exception class 08', withCode('08006')],
    ['too many connections (53300)', withCode('53300')],
    ['connection lost mid-query', new Error('Connection terminated unexpectedly')],
    ['pool connect timeout', new Error('timeout exceeded when trying to connect')],
    [
      'connection timeout',
      new Error('Connection terminated due to connection timeout', {
        cause: new Error('Connection terminated unexpectedly'),
      }),
    ],
    [
      'every address refused (AggregateError)',
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
    ],
    ['wrapped in a cause', new Error('query failed', { cause: withCode('ECONNRESET') })],
  ]
  for (const [name, err] of unavailable)
    it(name, () => assert.equal(isStorageUnavailable(err), true))

  const bugs: [string, unknown][] = [
    ['unique violation (23505)', withCode('23505')],
    ['syntax error (42601)', withCode('42601')],
    ['undefined table (42P01)', withCode('42P01')],
    ['SQLite constraint', withCode('SQLITE_CONSTRAINT_UNIQUE')],
    ['plain error', new Error('boom')],
    ['not an error', 'boom'],
    ['null', null],
  ]
  for (const [name, err] of bugs)
    it(`not: ${name}`, () => assert.equal(isStorageUnavailable(err), false))
})

describe('DATABASE_URL', () => {
  it('postgres:// and postgresql:// name PostgreSQL', () => {
    assert.equal(isPostgresUrl('postgres://u@h/db'), true)
    assert.equal(isPostgresUrl('postgresql://u@h/db'), true)
    assert.equal(isPostgresUrl('sqlite:./x.db'), false)
  })

  it('a password never shows in a printed URL', () => {
    assert.equal(
      redactDatabaseUrl('postgres://me:secret@db:5432/statusd'),
      'postgres://me:***@db:5432/statusd',
    )
    assert.equal(redactDatabaseUrl('sqlite:./data/statusd.db'), 'sqlite:./data/statusd.db')
  })

  it('an unknown scheme is refused with the schemes that work', () => {
    assert.throws(() => createDatabase('mysql://h/db'), /sqlite:<path>.*postgres:\/\//)
  })

  it('a PostgreSQL URL opens lazily: nothing connects until the first query', async (t) => {
    const database = createDatabase('postgres://nobody@127.0.0.1:1/none', { poolSize: 2 })
    t.after(() => database.close())
    assert.equal(database.engine, 'postgres')
    assert.equal(database.describe, 'postgres 127.0.0.1:1/none')
    // ping answers at once when the server is down: with the clock stopped, no timeout of its
    // own (or of the pool's) can fire, so the answer comes from the refused connection
    t.mock.timers.enable({ apis: ['setTimeout'] })
    assert.equal(await database.ping(), false, 'nothing listens on port 1')
    await assert.rejects(database.db.selectFrom('users').selectAll().execute(), (err) =>
      isStorageUnavailable(err),
    )
  })

  it('a pool size below 1 is refused', () => {
    assert.throws(() => createDatabase('postgres://u@127.0.0.1/db', { poolSize: 0 }), /pool size/)
  })
})

test('a request that cannot get a pooled connection in time fails as unavailable, not a hang', {
  skip: postgresOnly,
}, async (t) => {
  const fresh = await testDatabase(t)
  const database = createDatabase(fresh.url, { poolSize: 1, connectTimeoutMs: 300 })
  defer(t, () => database.close())
  // the pool's one connection is opened first, and again if need be: the 300 ms also bound
  // the opening of a connection, which can take longer than that on a loaded machine
  const deadline = Date.now() + 30_000
  while (!(await database.ping())) assert.ok(Date.now() < deadline, 'the pool connects')
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  let took = () => {}
  const taken = new Promise<void>((resolve) => {
    took = resolve
  })
  // the pool's one connection is busy for as long as this holds it
  const holder = database.db.connection().execute(async (conn) => {
    await sql`select 1`.execute(conn)
    took()
    await held
  })
  // note: raced with the holder, so that its failure is caught at once, not left unhandled
  await Promise.race([taken, holder])
  // the clock stands still while the query waits for the busy connection: it fails when
  // the 300 ms connect timeout has passed, and not a millisecond before
  t.mock.timers.enable({ apis: ['setTimeout'] })
  let outcome: unknown = 'pending'
  const query = database.db
    .selectFrom('users')
    .selectAll()
    .execute()
    .then(
      () => 'answered',
      (err) => err,
    )
    .then((result) => {
      outcome = result
    })
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
  }
  await settle() // the query is queued for a connection, its timer set
  t.mock.timers.tick(299)
  await settle()
  assert.equal(outcome, 'pending', 'still waiting 1 ms before the connect timeout')
  t.mock.timers.tick(1)
  await query
  assert.ok(isStorageUnavailable(outcome), `fails as unavailable at the timeout: ${outcome}`)
  t.mock.timers.reset()
  assert.equal(await database.ping(), false, 'and /readyz reports it')
  release()
  await holder
  assert.equal(await database.ping(), true, 'a free connection: ready again')
})

test('a dedicated client (the LISTEN connection) is configured like the pool, outside it', {
  skip: postgresOnly,
}, async (t) => {
  const fresh = await testDatabase(t)
  const url = new URL(fresh.url)
  url.searchParams.set('application_name', 'statusd-eu1')
  const database = openPostgres(url.href, { poolSize: 1 })
  defer(t, () => database.close())
  const client = database.dedicatedClient('listen')
  defer(t, () => client.end())
  await client.connect()
  const { rows } = await client.query<{ app: string; schema: string }>(
    'select current_setting($1) as app, current_schema() as schema',
    ['application_name'],
  )
  assert.equal(rows[0]?.app, 'statusd-eu1:listen', 'the URL’s name, suffixed with the purpose')
  assert.equal(rows[0]?.schema, new URL(fresh.url).searchParams.get('options')?.split('=')[1])
  const pool = await sql<{
    app: string
  }>`select current_setting('application_name') as app`.execute(database.db)
  assert.equal(pool.rows[0]?.app, 'statusd-eu1', 'the pool keeps the plain name')
})
