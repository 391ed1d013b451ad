import { randomBytes } from 'node:crypto'
import pg from 'pg'
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
  drop(): Promise<void>
}

let admin: pg.Pool | undefined
const SCHEMA_PREFIX = 'statusd_test_'
// schemas a crashed or interrupted run left behind are dropped once they are this old
const STALE_AFTER_SECONDS = 3600

async function adminPool(base: string): Promise<pg.Pool> {
  if (admin) return admin
  admin = new pg.Pool({ connectionString: base, max: 2, allowExitOnIdle: true })
  admin.on('error', () => {})
  const { rows } = await admin.query<{ name: string }>(
    'select nspname as name from pg_namespace where nspname like $1',
    [`${SCHEMA_PREFIX}%`],
  )
  const cutoff = Math.floor(Date.now() / 1000) - STALE_AFTER_SECONDS
  for (const { name } of rows) {
    const born = Number(name.slice(SCHEMA_PREFIX.length).split('_')[0])
    if (born < cutoff) await admin.query(`drop schema if exists "${name}" cascade`).catch(() => {})
  }
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
 * a new schema on the PostgreSQL server (connections to the URL use only that schema).
 * note: a schema, not a database: creating one takes milliseconds, and needs no CREATEDB.
 */
export async function freshDatabase(engine: TestEngine = TEST_ENGINE): Promise<TestDatabase> {
  if (engine === 'sqlite') return { url: 'sqlite::memory:', drop: async () => {} }
  if (!TEST_DATABASE_URL) throw new Error('a PostgreSQL test database needs TEST_DATABASE_URL')
  const pool = await adminPool(TEST_DATABASE_URL)
  const schema = `${SCHEMA_PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(6).toString('hex')}`
  await pool.query(`create schema "${schema}"`)
  return {
    url: withSearchPath(TEST_DATABASE_URL, schema),
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
