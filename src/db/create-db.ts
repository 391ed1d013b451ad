import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely } from 'kysely'
import type { DB } from './database.ts'
import { SqliteDialectWithSafeRollback } from './sqlite-dialect.ts'

export type Engine = 'sqlite' | 'postgres'

export interface Database {
  db: Kysely<DB>
  engine: Engine
  /** Where the data lives, without credentials: safe to log. */
  describe: string
  /** True when storage answers a trivial query. */
  ping(): Promise<boolean>
  close(): Promise<void>
}

/** Parses `sqlite:<path>` / `sqlite::memory:`; returns null for other schemes. */
export function sqlitePath(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null
  const rest = url.slice('sqlite:'.length)
  return rest === ':memory:' ? ':memory:' : rest.replace(/^\/\/(?=\/)/, '')
}

/**
 * How long a SQLite write waits for a lock another process holds (the admin CLI, a backup).
 * note: better-sqlite3 is synchronous, so the whole event loop waits with it — every other
 * request and the health checks too. A second rides out the CLI's millisecond transactions;
 * a lock held longer answers 503 with Retry-After rather than freezing the server for long.
 */
export const DEFAULT_BUSY_TIMEOUT_MS = 1000

export interface DatabaseOptions {
  /** SQLite only: see DEFAULT_BUSY_TIMEOUT_MS. */
  busyTimeoutMs?: number
}

/** Opens the database named by a `DATABASE_URL`. */
export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const path = sqlitePath(url)
  if (path !== null) return openSqlite(path, options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS)
  throw new Error(
    `DATABASE_URL ${url.split(':')[0]}: unsupported scheme (use sqlite:<path> or sqlite::memory:)`,
  )
}

function openSqlite(path: string, busyTimeoutMs: number): Database {
  if (path === '')
    throw new Error('DATABASE_URL sqlite: needs a path, e.g. sqlite:./data/statusd.db')
  const file = path === ':memory:' ? path : resolve(path)
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  // note: FULL fsyncs the WAL on every commit, so an acknowledged write survives power loss
  sqlite.pragma('synchronous = FULL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
  const db = new Kysely<DB>({ dialect: new SqliteDialectWithSafeRollback(sqlite) })
  return {
    db,
    engine: 'sqlite',
    describe: file === ':memory:' ? 'sqlite (in memory)' : `sqlite ${file}`,
    async ping() {
      try {
        sqlite.prepare('select 1').get()
        return true
      } catch {
        return false
      }
    },
    close: () => db.destroy(),
  }
}

const UNAVAILABLE_SQLITE = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_READONLY',
  'SQLITE_NOTADB',
  'SQLITE_CORRUPT',
])

/** True when an error means storage cannot serve right now (→ 503), not a bug (→ 500). */
export function isStorageUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return false
  return UNAVAILABLE_SQLITE.has(code.replace(/^(SQLITE_[A-Z]+).*$/, '$1'))
}
