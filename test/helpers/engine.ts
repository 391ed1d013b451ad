import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DatabaseOptions } from '../../src/db/engine.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { defer, type Lifetime } from './cleanup.ts'

/**
 * The engine this test run uses: `sqlite` unless the runner (scripts/test.ts) sets
 * TEST_ENGINE=postgres, which it does only when TEST_DATABASE_URL names a server.
 */
export type TestEngine = 'sqlite' | 'postgres'

export const TEST_ENGINE: TestEngine =
  process.env.TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'

/** The server the PostgreSQL run uses; each test works in its own schema on it. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined

if (TEST_ENGINE === 'postgres' && !TEST_DATABASE_URL)
  throw new Error('TEST_ENGINE=postgres needs TEST_DATABASE_URL=postgres://…')

// scripts/test.ts runs on PostgreSQL only the test files it finds importing this module
// (scripts/engine-files.ts), and names them in TEST_ENGINE_FILES: a test file that loads it
// without being named there would be left out of the PostgreSQL pass, so it fails instead
// (docs/architecture.md#tests). A process that is not a test file (a script a test starts)
// sets its engine itself.
const entry = process.argv[1]
if (process.env.TEST_ENGINE_FILES !== undefined && entry?.endsWith('.test.ts')) {
  const file = relative(process.cwd(), entry).split('\\').join('/')
  if (!process.env.TEST_ENGINE_FILES.split('\n').includes(file))
    throw new Error(
      `${file} loads test/helpers/engine.ts, but scripts/engine-files.ts does not find it importing that module, so the PostgreSQL pass would leave it out: import it (or a helper that does) with a static import or import() of a literal path`,
    )
}

/**
 * `skip` option for a test that needs PostgreSQL: false on the PostgreSQL run, otherwise
 * the reason it is skipped (printed by the reporter).
 */
export const postgresOnly: string | false =
  TEST_ENGINE === 'postgres'
    ? false
    : TEST_DATABASE_URL
      ? 'PostgreSQL only: runs in the PostgreSQL pass of npm test'
      : 'PostgreSQL only: TEST_DATABASE_URL not set'

/** A fresh, empty database for one test, and how to throw it away. */
export interface TestDatabase {
  url: string
  /** What opening it needs besides the URL (a migrated copy's content, on SQLite). */
  options?: DatabaseOptions
  drop(): Promise<void>
}

const SCHEMA_PREFIX = 'statusd_test_'
// schemas a crashed or interrupted run left behind in a database no worker holds are
// dropped once they are this old
const STALE_AFTER_SECONDS = 3600
// advisory lock class (pg_advisory_lock's first key) of the worker databases
const WORKER_LOCK = 0x5747

/**
 * The database this test process works in: `<name>_w<n>` beside TEST_DATABASE_URL's, held
 * for the life of the process by a session advisory lock, and created the first time it is
 * needed (it stays for later runs).
 * note: a database per process, not only a schema per test: Kysely's migrator scans the
 * tables of every schema of its database, and a schema another process drops during that
 * scan fails the migration ("schema … does not exist"). A database no other process uses
 * has no schema dropped under a scan. Without the right to create databases, the tests
 * share TEST_DATABASE_URL's and run as before.
 */
async function workerDatabase(base: string): Promise<{ url: string; held: boolean }> {
  // note: a pool of one that keeps its idle connection (idleTimeoutMillis 0) without
  // keeping the process alive (allowExitOnIdle): the lock lasts as long as the process. It
  // runs nothing that can fail: a query that fails takes its connection, and the lock, away.
  const lock = new pg.Pool({
    connectionString: base,
    max: 1,
    idleTimeoutMillis: 0,
    allowExitOnIdle: true,
  })
  lock.on('error', () => {})
  const baseName = decodeURIComponent(new URL(base).pathname.slice(1)) || 'postgres'
  for (let n = 0; n < 64; n++) {
    const { rows } = await lock.query<{ ok: boolean }>(
      'select pg_try_advisory_lock($1, $2) as ok',
      [WORKER_LOCK, n],
    )
    if (!rows[0]?.ok) continue
    const name = `${baseName}_w${n}`
    const client = new pg.Client({ connectionString: base })
    await client.connect()
    try {
      await client.query(`create database "${name}"`)
    } catch (err) {
      const code = (err as { code?: string }).code
      // 42P04: it exists already (made by an earlier run); 42501: no right to create one
      if (code === '42501') return { url: base, held: false }
      if (code !== '42P04') throw err
    } finally {
      await client.end()
    }
    return { url: onDatabase(base, name), held: true }
  }
  return { url: base, held: false }
}

interface Admin {
  pool: pg.Pool
  /** The database this process works in. */
  url: string
  /** Whether it is this process's alone (see workerDatabase). */
  held: boolean
}

let admin: Promise<Admin> | undefined

/**
 * Drops a database, ending the connections a test left open (as dropping a schema does)
 * where the server can (WITH (FORCE), PostgreSQL 13 and later).
 */
async function dropDatabase(pool: pg.Pool, name: string): Promise<void> {
  try {
    await pool.query(`drop database if exists "${name}" with (force)`)
  } catch (err) {
    // 42601: a syntax error, from a server older than WITH (FORCE)
    if ((err as { code?: string }).code !== '42601') throw err
    await pool.query(`drop database if exists "${name}"`)
  }
}

/** `base` naming the database `name` on the same server. */
function onDatabase(base: string, name: string): string {
  const url = new URL(base)
  url.pathname = `/${encodeURIComponent(name)}`
  return url.href
}

/** The name of the database `url` names. */
const databaseName = (url: string): string => decodeURIComponent(new URL(url).pathname.slice(1))

function adminPool(base: string): Promise<Admin> {
  admin ??= (async () => {
    const worker = await workerDatabase(base)
    const pool = new pg.Pool({ connectionString: worker.url, max: 2, allowExitOnIdle: true })
    pool.on('error', () => {})
    const { rows } = await pool.query<{ name: string }>(
      'select nspname as name from pg_namespace where nspname like $1',
      [`${SCHEMA_PREFIX}%`],
    )
    // in a database this process holds, every test schema is left over from an earlier one
    const cutoff = worker.held ? Infinity : Math.floor(Date.now() / 1000) - STALE_AFTER_SECONDS
    for (const { name } of rows) {
      const born = Number(name.slice(SCHEMA_PREFIX.length).split('_')[0])
      if (born < cutoff) await pool.query(`drop schema if exists "${name}" cascade`).catch(() => {})
    }
    if (worker.held) {
      // and so is every app database copied beside it (migratedCopy), and its template
      const prefix = `${databaseName(worker.url)}_`
      const { rows: copies } = await pool.query<{ name: string }>(
        'select datname as name from pg_database where left(datname, length($1)) = $1',
        [prefix],
      )
      for (const { name } of copies) await dropDatabase(pool, name).catch(() => {})
    }
    return { pool, url: worker.url, held: worker.held }
  })()
  return admin
}

/** `base` with `search_path` set to one schema, through libpq's `options` parameter. */
export function withSearchPath(base: string, schema: string): string {
  const url = new URL(base)
  const options = url.searchParams.get('options')
  url.searchParams.set('options', `${options ? `${options} ` : ''}-c search_path=${schema}`)
  return url.href
}

/**
 * A fresh, unmigrated database on the engine under test: an in-memory SQLite database, or
 * a new schema in this process's database on the PostgreSQL server (connections to the URL
 * use only that schema). note: a schema per test, not a database: it takes milliseconds.
 */
export async function freshDatabase(engine: TestEngine = TEST_ENGINE): Promise<TestDatabase> {
  if (engine === 'sqlite') return { url: 'sqlite::memory:', drop: async () => {} }
  if (!TEST_DATABASE_URL) throw new Error('a PostgreSQL test database needs TEST_DATABASE_URL')
  const { pool, url } = await adminPool(TEST_DATABASE_URL)
  const schema = `${SCHEMA_PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(6).toString('hex')}`
  await pool.query(`create schema "${schema}"`)
  return {
    url: withSearchPath(url, schema),
    drop: async () => {
      await pool.query(`drop schema if exists "${schema}" cascade`)
    },
  }
}

/** `freshDatabase()` for one test (or suite): dropped when `t` ends, after what uses it closed. */
export async function testDatabase(
  t: Lifetime,
  engine: TestEngine = TEST_ENGINE,
): Promise<TestDatabase> {
  const fresh = await freshDatabase(engine)
  defer(t, () => fresh.drop())
  return fresh
}

/**
 * An empty PostgreSQL database of its own for one test (`<name>_w<n>_…` beside this process's,
 * so a run that dies leaves it to the next run's cleanup), dropped when `t` ends; undefined
 * when the role may not create databases. For what needs a whole database, not a schema: a
 * plain pg_dump names its tables in the `public` schema.
 */
export async function emptyPostgresDatabase(t: Lifetime): Promise<TestDatabase | undefined> {
  if (!TEST_DATABASE_URL) throw new Error('a PostgreSQL test database needs TEST_DATABASE_URL')
  const { pool, url, held } = await adminPool(TEST_DATABASE_URL)
  if (!held) return undefined
  const name = `${databaseName(url)}_${Math.floor(Date.now() / 1000)}_${randomBytes(6).toString('hex')}`
  await pool.query(`create database "${name}"`)
  const drop = () => dropDatabase(pool, name)
  defer(t, drop)
  return { url: onDatabase(url, name), drop }
}

let template: Promise<string | undefined> | undefined

/**
 * The name of a database with every migration applied, made once per process beside this
 * process's own (`<name>_w<n>_template`), or undefined when the process has no database of
 * its own (no right to create one).
 */
function migratedTemplate(): Promise<string | undefined> {
  template ??= (async () => {
    const { pool, url, held } = await adminPool(TEST_DATABASE_URL as string)
    if (!held) return undefined
    const name = `${databaseName(url)}_template`
    await pool.query(`create database "${name}"`)
    const database = createDatabase(onDatabase(url, name), { poolSize: 1 })
    try {
      await migrateToLatest(database.db)
    } finally {
      await database.close()
    }
    return name
  })()
  return template
}

let sqliteImage: Promise<Buffer> | undefined

/**
 * The bytes of a SQLite database with every migration applied, made once per process: an
 * in-memory database migrated, then written out with VACUUM INTO and read back.
 */
function migratedSqliteImage(): Promise<Buffer> {
  sqliteImage ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'statusd-template-'))
    const file = join(dir, 'migrated.db')
    const database = createDatabase('sqlite::memory:')
    try {
      await migrateToLatest(database.db)
      await sql`vacuum into ${file}`.execute(database.db)
      return readFileSync(file)
    } finally {
      await database.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })()
  return sqliteImage
}

/** Copies still waiting to be dropped before the next copy waits for them (bounds disk use). */
const MAX_PENDING_DROPS = 4

interface Copies {
  /** The migrated database copies are made from. */
  source: string
  /** The database this process works in. */
  url: string
  /** Makes copies (adminPool's). */
  pool: pg.Pool
  /**
   * Drops copies, one at a time, off the tests' path: a connection of its own, so that a
   * copy never waits behind a drop.
   */
  dropper: pg.Pool
  /** The next copy, made ahead of need while the current test runs. */
  spare?: Promise<string>
  /** The end of the chain of drops under way. */
  drops: Promise<void>
  pendingDrops: number
  failures: unknown[]
}

let copies: Promise<Copies | undefined> | undefined

function newCopy(c: Copies): Promise<string> {
  const name = `${databaseName(c.url)}_${Math.floor(Date.now() / 1000)}_${randomBytes(6).toString('hex')}`
  return c.pool.query(`create database "${name}" template "${c.source}"`).then(() => name)
}

/**
 * Queues dropping `name`; resolves at once unless too many drops are pending, then when
 * this one is done. A drop that fails fails the process when it ends (below).
 */
function dropLater(c: Copies, name: string): Promise<void> {
  c.pendingDrops += 1
  const done = c.drops
    .then(() => dropDatabase(c.dropper, name))
    .catch((err: unknown) => void c.failures.push(err))
    .finally(() => {
      c.pendingDrops -= 1
    })
  c.drops = done
  return c.pendingDrops > MAX_PENDING_DROPS ? done : Promise.resolve()
}

/**
 * Ends what copying left for the end of the process: once nothing else is left to run
 * (`beforeExit`), the spare copy is dropped and every drop is awaited (their queries keep
 * the process alive); a drop that failed sets a failing exit code. A process killed
 * before leaves its copies to the next run in its database (adminPool drops them).
 */
function settleAtExit(c: Copies): void {
  process.on('beforeExit', () => {
    const spare = c.spare
    c.spare = undefined
    if (spare) {
      spare.then(
        (name) => dropLater(c, name),
        () => {}, // a spare that could not be made: nothing to drop
      )
      return
    }
    if (c.failures.length === 0) return
    for (const err of c.failures.splice(0))
      process.stderr.write(`dropping a test database failed: ${String(err)}\n`)
    process.exitCode = 1
  })
}

function copier(): Promise<Copies | undefined> {
  copies ??= (async () => {
    const source = await migratedTemplate()
    if (source === undefined) return undefined
    const { pool, url } = await adminPool(TEST_DATABASE_URL as string)
    const dropper = new pg.Pool({ connectionString: url, max: 1, allowExitOnIdle: true })
    dropper.on('error', () => {})
    const c: Copies = {
      source,
      url,
      pool,
      dropper,
      drops: Promise.resolve(),
      pendingDrops: 0,
      failures: [],
    }
    settleAtExit(c)
    return c
  })()
  return copies
}

/**
 * A fresh database with every migration applied, for one app (makeApp), and how to drop it:
 * a copy of one this process migrated once, which is cheaper than applying every migration
 * again; no other test sees the copy. On SQLite an in-memory database that starts as the
 * migrated one's bytes (DatabaseOptions.memoryImage); on PostgreSQL a database of its own
 * (CREATE DATABASE … TEMPLATE), or undefined without the right to create databases: the
 * caller migrates a freshDatabase() then.
 * note: on PostgreSQL, making and dropping a copy take longer than many tests; neither is
 * on the test's path: each copy handed out starts the next (a spare nobody has connected
 * to), and `drop` queues the drop, which runs while the next test does (all are awaited
 * before the process exits, see settleAtExit).
 */
export async function migratedCopy(): Promise<TestDatabase | undefined> {
  if (TEST_ENGINE === 'sqlite')
    return {
      url: 'sqlite::memory:',
      options: { memoryImage: await migratedSqliteImage() },
      drop: async () => {},
    }
  const c = await copier()
  if (c === undefined) return undefined
  const taken = c.spare ?? newCopy(c)
  c.spare = newCopy(c)
  // a spare that fails is reported by the test that takes it
  c.spare.catch(() => {})
  const name = await taken
  return { url: onDatabase(c.url, name), drop: () => dropLater(c, name) }
}
