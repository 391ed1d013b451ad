import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { describe, it, test } from 'node:test'
import { sql } from 'kysely'
import { loadConfig } from '../../src/config.ts'
import { problemWithDatabaseUrl, redactDatabaseUrl } from '../../src/db/database-url.ts'
import { NoPrimaryError } from '../../src/db/postgres/connect-primary.ts'
import { openPostgres } from '../../src/db/postgres/open-postgres.ts'
import { parsePostgresUrl } from '../../src/db/postgres/postgres-url.ts'
import { storageErrorKind, writeRefusalOf } from '../../src/db/storage-error.ts'
import { defer } from '../helpers/cleanup.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'

// docs/postgres.md#failover and docs/operations.md#configuration: DATABASE_URL may name
// several hosts (libpq's syntax) and target_session_attrs; statusd connects to the first that
// takes writes.

describe('a multi-host DATABASE_URL is read as libpq reads it', () => {
  const cases: [string, string, { labels: string[]; urls: string[]; attrs: string }][] = [
    [
      'two hosts with ports, read-write: one URL per host, the rest of the URL unchanged',
      'postgres://me:pw@db1:5432,db2:5433/statusd?target_session_attrs=read-write&sslmode=require',
      {
        labels: ['db1:5432', 'db2:5433'],
        urls: [
          'postgres://me:pw@db1:5432/statusd?target_session_attrs=read-write&sslmode=require',
          'postgres://me:pw@db2:5433/statusd?target_session_attrs=read-write&sslmode=require',
        ],
        attrs: 'read-write',
      },
    ],
    [
      'hosts without ports, postgresql://, no target_session_attrs: any',
      'postgresql://a,b/db',
      { labels: ['a', 'b'], urls: ['postgresql://a/db', 'postgresql://b/db'], attrs: 'any' },
    ],
    [
      'IPv6 addresses in brackets',
      'postgres://[::1]:5432,[fd00::2]/db?target_session_attrs=any',
      {
        labels: ['[::1]:5432', '[fd00::2]'],
        urls: [
          'postgres://[::1]:5432/db?target_session_attrs=any',
          'postgres://[fd00::2]/db?target_session_attrs=any',
        ],
        attrs: 'any',
      },
    ],
    [
      'a socket directory (percent-encoded) next to a TCP host',
      'postgres://%2Frun%2Fpostgresql,db2:5432/db',
      {
        labels: ['%2Frun%2Fpostgresql', 'db2:5432'],
        urls: ['postgres://%2Frun%2Fpostgresql/db', 'postgres://db2:5432/db'],
        attrs: 'any',
      },
    ],
    [
      'one host, as before',
      'postgres://u@h/db?options=-c%20search_path%3Ds',
      { labels: ['h'], urls: ['postgres://u@h/db?options=-c%20search_path%3Ds'], attrs: 'any' },
    ],
    [
      'a raw @ in the password: the hosts come after the last one',
      'postgres://me:p@ss@db1,db2:/db',
      {
        labels: ['db1', 'db2:'],
        urls: ['postgres://me:p@ss@db1/db', 'postgres://me:p@ss@db2:/db'],
        attrs: 'any',
      },
    ],
    [
      'no host at all (the local socket)',
      'postgres:///db',
      { labels: ['localhost'], urls: ['postgres:///db'], attrs: 'any' },
    ],
  ]
  for (const [name, url, expected] of cases)
    it(name, () => {
      const parsed = parsePostgresUrl(url)
      assert.deepEqual(
        parsed.hosts.map((h) => h.label),
        expected.labels,
      )
      assert.deepEqual(
        parsed.hosts.map((h) => h.url),
        expected.urls,
      )
      assert.equal(parsed.sessionAttrs, expected.attrs)
      assert.equal(problemWithDatabaseUrl(url), undefined)
    })

  const refused: [string, string, RegExp][] = [
    ['an empty host in the list', 'postgres://u:secret@db1,,db2/db', /host 2 of 3 is empty/],
    [
      'a port out of range',
      'postgres://u:secret@db1:5432,db2:99999/db',
      /port of host 2 of 2 is not between 1 and 65535/,
    ],
    [
      'a port that is not a number',
      'postgres://u:secret@db1:x/db',
      /port of the host is not a number/,
    ],
    ['a broken bracket', 'postgres://u:secret@[bad/x', /the host is not host or host:port/],
    [
      'a target_session_attrs statusd cannot write through',
      'postgres://u:secret@db1,db2/db?target_session_attrs=read-only',
      /target_session_attrs must be read-write or any .*got "read-only"/,
    ],
    [
      'hosts both in the list and as ?host=',
      'postgres://u:secret@db1,db2/db?host=db3',
      /several hosts.*not as \?host= or \?port=/,
    ],
  ]
  for (const [name, url, message] of refused)
    it(`refused at start: ${name}, in one line without the password`, () => {
      assert.throws(
        () => loadConfig({ DATABASE_URL: url }),
        (err: Error) => {
          assert.match(err.message, /^DATABASE_URL/)
          assert.match(err.message, message)
          assert.doesNotMatch(err.message, /secret|\n/)
          return true
        },
      )
    })

  it('DATABASE_LISTEN_URL is read alike, and named in its message', () => {
    const env = { DATABASE_URL: 'postgres://u@db1,db2/db?target_session_attrs=read-write' }
    assert.equal(
      loadConfig({ ...env, DATABASE_LISTEN_URL: 'postgres://u@db1:5432,db2:5432/db' })
        .databaseListenUrl,
      'postgres://u@db1:5432,db2:5432/db',
    )
    assert.throws(
      () => loadConfig({ ...env, DATABASE_LISTEN_URL: 'postgres://u:secret@db1,/db' }),
      /^ConfigError: DATABASE_LISTEN_URL: host 2 of 2 is empty/,
    )
  })

  it('a printed multi-host URL has no password, its hosts as written', () => {
    assert.equal(
      redactDatabaseUrl(
        'postgres://me:secret@db1:5432,db2:5433/statusd?target_session_attrs=read-write',
      ),
      'postgres://me:***@db1:5432,db2:5433/statusd?target_session_attrs=read-write',
    )
    assert.equal(redactDatabaseUrl('postgres://me@db1,db2/x'), 'postgres://me@db1,db2/x')
  })

  it('no host taking writes is a 503 (unavailable), not a read-only refusal of the write', () => {
    const err = new NoPrimaryError(
      [
        Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
        new Error('read-only'),
      ],
      'no host of the database URL takes writes now',
    )
    assert.equal(storageErrorKind(err), 'unavailable')
    assert.equal(writeRefusalOf(err), undefined)
  })
})

/** A loopback port where nothing listens: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

/** The test database's URL with a refusing host listed before its own, and more parameters. */
async function withDeadHostFirst(url: string, params: Record<string, string>): Promise<string> {
  const parsed = new URL(url)
  for (const [key, value] of Object.entries(params)) parsed.searchParams.set(key, value)
  const host = `127.0.0.1:${await closedPort()}`
  return parsed.href.replace(/^(postgres(?:ql)?:\/\/(?:[^@/]*@)?)/, `$1${host},`)
}

test('connections go to the first host that takes writes: the pool, probes and LISTEN', {
  skip: postgresOnly,
}, async (t) => {
  const fresh = await testDatabase(t)
  const url = await withDeadHostFirst(fresh.url, { target_session_attrs: 'read-write' })
  const database = openPostgres(url, { poolSize: 2 })
  defer(t, () => database.close())
  assert.match(database.describe, /^postgres 127\.0\.0\.1:\d+,[^,]+\//, 'both hosts described')
  assert.equal(await database.ping(), true)
  const { rows } = await sql<{ port: number }>`select inet_server_port() as port`.execute(
    database.db,
  )
  assert.equal(rows[0]?.port, Number(new URL(fresh.url).port), 'the host that answers')
  const listen = database.dedicatedClient('listen')
  defer(t, () => listen.end())
  await listen.connect()
  assert.equal((await listen.query('select 1 as one')).rows[0]?.one, 1)
})

test('with read-write, a read-only server is no primary: 503 unavailable, nothing connects', {
  skip: postgresOnly,
}, async (t) => {
  const fresh = await testDatabase(t)
  const url = new URL(fresh.url)
  url.searchParams.set(
    'options',
    `${url.searchParams.get('options')} -c default_transaction_read_only=on`,
  )
  url.searchParams.set('target_session_attrs', 'read-write')
  const database = openPostgres(url.href, { poolSize: 2 })
  defer(t, () => database.close())
  assert.equal(await database.ping(), false, '/readyz says not ready')
  const err = await sql`select 1`.execute(database.db).then(
    () => assert.fail('a read-only server was used'),
    (e: unknown) => e,
  )
  assert.ok(err instanceof NoPrimaryError, String(err))
  assert.equal(storageErrorKind(err), 'unavailable')
  // the same URL with any: the read-only server will do
  url.searchParams.set('target_session_attrs', 'any')
  const anyDb = openPostgres(url.href, { poolSize: 1 })
  defer(t, () => anyDb.close())
  assert.equal(await anyDb.ping(), true)
})

test('a write refused as read-only (25006) drops the connections: the next ones look for the primary again', {
  skip: postgresOnly,
}, async (t) => {
  const fresh = await testDatabase(t)
  const url = new URL(fresh.url)
  url.searchParams.set('target_session_attrs', 'read-write')
  const database = openPostgres(url.href, { poolSize: 1 })
  defer(t, () => database.close())
  // the one pooled connection turns read-only, as a demoted server's sessions would
  const pid = async () =>
    (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database.db)).rows[0]?.pid
  const before = await pid()
  await sql`set session characteristics as transaction read only`.execute(database.db)
  const write = () =>
    database.writer.run(async (tx) => {
      await sql`create temporary table failover_probe (x integer) on commit drop`.execute(tx)
    })
  await assert.rejects(write(), (err: { code?: string }) => err.code === '25006')
  assert.notEqual(await pid(), before, 'the read-only connection was dropped, a new one opened')
  await write()
})
