import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, type SqliteDatabase, type Transaction } from 'kysely'
import type pg from 'pg'
import {
  type BusLog,
  type EventBus,
  InProcessEventBus,
  type MessageFormat,
} from '../lib/event-bus.ts'
import type { DB } from './database.ts'
import { groupCommitWriter, transactionPerWrite, type Writer } from './group-commit.ts'
import { PgEventBus } from './postgres/pg-event-bus.ts'
import type { DirectRunner } from './prepared.ts'
import { SqliteDialectWithSafeRollback } from './sqlite-dialect.ts'
import { type SqliteDurabilityOptions, sqliteDurability } from './sqlite-durability.ts'
import { withStatementCache } from './statement-cache.ts'

export type Engine = 'sqlite' | 'postgres'

/** What a database needs to open an event bus for one kind of message. */
export interface EventBusOptions<M> extends MessageFormat<M> {
  log: BusLog
  /** Called when a listener throws; the other listeners still get the message. */
  onListenerError?: (err: unknown) => void
}

export interface Database {
  db: Kysely<DB>
  engine: Engine
  /** How services commit their writes: the engine's best way (group commit on SQLite). */
  writer: Writer
  /** Where the data lives, without credentials: safe to log. */
  describe: string
  /** True when storage answers a trivial query. */
  ping(): Promise<boolean>
  /**
   * PostgreSQL only: a new connection outside the pool, configured like the pool's (same URL,
   * TLS, search_path, connect timeout), for a long-lived session such as the event bus's
   * LISTEN. Not connected yet; the caller connects and ends it. Its `application_name` is the
   * pool's with `:<purpose>` added, so it can be told apart in `pg_stat_activity`.
   */
  dedicatedClient?(purpose: string): pg.Client
  /**
   * File-backed SQLite only: the database file and its write-ahead log, whose sizes
   * `/metrics` reports (a log held back from restarting by a long reader keeps growing).
   */
  files?: { database: string; log: string }
  /**
   * Opens the bus on which committed writes reach live streams: between every instance on
   * the database where several can share it (PostgreSQL: LISTEN/NOTIFY), else in process.
   * The caller closes it.
   */
  openEventBus<M>(options: EventBusOptions<M>): Promise<EventBus<M, Transaction<DB>>>
  close(): Promise<void>
}

/** Parses `sqlite:<path>` / `sqlite::memory:`; returns null for other schemes. */
export function sqlitePath(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null
  const rest = url.slice('sqlite:'.length)
  return rest === ':memory:' ? ':memory:' : rest.replace(/^\/\/(?=\/)/, '')
}

/** True for `postgres://…` and `postgresql://…` URLs. */
export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url)

/**
 * How long a SQLite write waits for a lock another process holds (the admin CLI, a backup).
 * note: better-sqlite3 is synchronous, so the whole event loop waits with it — every other
 * request and the health checks too. A second rides out the CLI's millisecond transactions;
 * a lock held longer answers 503 with Retry-After rather than freezing the server for long.
 */
export const DEFAULT_BUSY_TIMEOUT_MS = 1000

const WAL_SIZE_LIMIT = 128 * 1024 * 1024

export interface DatabaseOptions {
  /** Most connections a PostgreSQL pool opens (`DATABASE_POOL_SIZE`); SQLite ignores it. */
  poolSize?: number
  /** How long a query waits for a PostgreSQL connection before it fails (503). */
  connectTimeoutMs?: number
  /** SQLite only: see DEFAULT_BUSY_TIMEOUT_MS. */
  busyTimeoutMs?: number
  /**
   * SQLite only: how often checkpoints run and how far the log may grow before it must
   * restart (sqlite-durability.ts; the defaults suit every deployment, tests use small ones),
   * and who hears of a checkpoint that failed (`onError`: the server logs it).
   */
  checkpoints?: Pick<SqliteDurabilityOptions, 'checkpointEvery' | 'restartFrames' | 'onError'>
  /**
   * SQLite only: open the file read-only, as it is (no switch to WAL mode, no checkpoints):
   * for reading a file that must not change, e.g. a `VACUUM INTO` backup as a copy's source.
   */
  readOnly?: boolean
}

/** Connections per instance when `DATABASE_POOL_SIZE` is not set. */
export const DEFAULT_POOL_SIZE = 10

/** Opens the database named by a `DATABASE_URL`. */
export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const path = sqlitePath(url)
  if (path !== null)
    return openSqlite(path, options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS, options.checkpoints, {
      readOnly: options.readOnly ?? false,
    })
  if (isPostgresUrl(url))
    return openPostgres(
      url,
      options.poolSize ?? DEFAULT_POOL_SIZE,
      options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    )
  throw new Error(
    `DATABASE_URL ${url.split(':')[0]}: unsupported scheme (use sqlite:<path>, sqlite::memory: or postgres://…)`,
  )
}

/** A URL without its password: safe to log and print. */
export function redactUrl(url: string): string {
  if (!isPostgresUrl(url)) return url
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.href
  } catch {
    return `${url.split(':')[0]}://…`
  }
}

function openSqlite(
  path: string,
  busyTimeoutMs: number,
  checkpoints: DatabaseOptions['checkpoints'],
  { readOnly }: { readOnly: boolean },
): Database {
  if (path === '')
    throw new Error('DATABASE_URL sqlite: needs a path, e.g. sqlite:./data/statusd.db')
  const file = path === ':memory:' ? path : resolve(path)
  if (file !== ':memory:' && !readOnly) mkdirSync(dirname(file), { recursive: true })
  const sqlite = new SQLite(file, { readonly: readOnly, fileMustExist: readOnly })
  if (!readOnly) sqlite.pragma('journal_mode = WAL')
  // note: FULL fsyncs the WAL on every commit, so an acknowledged write survives power loss;
  // group-committed batches get the same guarantee off the event loop (sqlite-durability.ts)
  sqlite.pragma('synchronous = FULL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
  const statements = withStatementCache(sqlite)
  const db = new Kysely<DB>({ dialect: new SqliteDialectWithSafeRollback(sqlite, statements) })
  // an in-memory database has no log to sync or checkpoint
  const durability =
    file === ':memory:' || readOnly ? undefined : sqliteDurability(file, checkpoints)
  if (durability) {
    // checkpoints run on the durability's own thread, never inside a request's commit
    sqlite.pragma('wal_autocheckpoint = 0')
    // the log restarts at about 64 MiB (sqlite-durability.ts); should it ever grow far past
    // that, its file is cut back to this size when it restarts, not kept at its largest
    sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`)
  }
  return {
    db,
    engine: 'sqlite',
    // every commit is an fsync: writes arriving together share one
    writer: groupCommitWriter(db, {
      hooks: { ...durability, direct: directRunner(statements) },
    }),
    describe: file === ':memory:' ? 'sqlite (in memory)' : `sqlite ${file}`,
    ...(file !== ':memory:' && { files: { database: file, log: `${file}-wal` } }),
    // one process uses the database: the bus never leaves it
    openEventBus: async (options) => new InProcessEventBus(options),
    async ping() {
      try {
        sqlite.prepare('select 1').get()
        return true
      } catch {
        return false
      }
    },
    async close() {
      await durability?.close()
      await db.destroy()
    },
  }
}

/**
 * A batch's statements straight on better-sqlite3, with the result Kysely's SQLite driver
 * gives: no promise chain per statement (Kysely's executor allocated about a third of a
 * PATCH's garbage; docs/performance.md).
 */
const directRunner =
  (statements: SqliteDatabase): DirectRunner =>
  (sqlText, parameters) => {
    const statement = statements.prepare(sqlText)
    if (statement.reader) return { rows: statement.all(parameters) as unknown[] }
    const { changes, lastInsertRowid } = statement.run(parameters)
    return {
      insertId: lastInsertRowid == null ? undefined : BigInt(lastInsertRowid),
      numAffectedRows: changes == null ? undefined : BigInt(changes),
      rows: [],
    }
  }

// How long a request waits for a pooled connection (a new one, or a busy pool's next free
// one) before it fails with 503; and how long /readyz waits for its probe.
const CONNECT_TIMEOUT_MS = 5_000
const PING_TIMEOUT_MS = 2_000

// note: pg is loaded only when the database is PostgreSQL (cold start on SQLite)
const require = createRequire(import.meta.url)

function openPostgres(url: string, poolSize: number, connectTimeoutMs: number): Database {
  const { Pool, Client, types } = require('pg') as typeof pg
  if (!Number.isInteger(poolSize) || poolSize < 1)
    throw new Error(`database pool size must be a positive integer, got ${poolSize}`)
  let parsed: URL | undefined
  try {
    parsed = new URL(url)
  } catch {
    // an unparsable URL fails on first connect with pg's own message
  }
  const applicationName = parsed?.searchParams.get('application_name') ?? 'statusd'
  const pool = new Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    // shows in pg_stat_activity; a URL's own application_name wins
    application_name: applicationName,
    // bigint (int8: the status counters, counts) as a number, as SQLite gives it: pg's
    // default is a string. They stay far below 2^53.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === types.builtins.INT8
          ? Number
          : types.getTypeParser(oid, format)) as typeof types.getTypeParser,
    },
  })
  // note: an idle pooled connection that dies (server restart, admin shutdown) emits 'error'
  // on the pool; unhandled, that would crash the process. The pool has already dropped it and
  // the next query opens a fresh one, so there is nothing to do here.
  pool.on('error', () => {})
  // note: … and a connection that dies while checked out (a query in flight: a server restart,
  // failover, pg_terminate_backend) emits 'error' on its client, which pg-pool no longer
  // listens to then. The query itself fails (503), the pool drops the client on release; the
  // event must not crash the process, so every client gets a listener for its whole life.
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) })
  const dedicatedClient = (purpose: string) => {
    // note: pg lets a URL's parameters override the config, so the URL's own
    // application_name is taken out for the suffixed one to show
    let connectionString = url
    if (parsed?.searchParams.has('application_name')) {
      const copy = new URL(parsed.href)
      copy.searchParams.delete('application_name')
      connectionString = copy.href
    }
    return new Client({
      connectionString,
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      // a peer that vanished without a FIN is noticed in seconds, not hours
      keepAliveInitialDelayMillis: 10_000,
      application_name: `${applicationName}:${purpose}`,
    })
  }
  return {
    db,
    engine: 'postgres',
    // commits run in parallel on pooled connections (and the server groups their WAL flushes)
    writer: transactionPerWrite(db),
    describe: parsed
      ? `postgres ${parsed.hostname || 'localhost'}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`
      : 'postgres',
    async ping() {
      let timer: NodeJS.Timeout | undefined
      const probe = pool.query('select 1').then(
        () => true,
        () => false,
      )
      const timeout = new Promise<boolean>((done) => {
        timer = setTimeout(() => done(false), PING_TIMEOUT_MS)
      })
      try {
        return await Promise.race([probe, timeout])
      } finally {
        clearTimeout(timer)
      }
    },
    dedicatedClient,
    // every instance on the database delivers every change: NOTIFY in the write's
    // transaction, and one LISTEN connection per instance
    async openEventBus(options) {
      const bus = new PgEventBus({ db, ...options, openClient: () => dedicatedClient('listen') })
      await bus.start()
      return bus
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

// File-system failures of an fsync or a write (the WAL sync of sqlite-durability.ts).
const UNAVAILABLE_FILESYSTEM = new Set(['EIO', 'ENOSPC', 'EDQUOT', 'EROFS', 'EBADF', 'ENOENT'])

// Socket-level failures reaching a PostgreSQL server (Node's error codes).
const UNAVAILABLE_NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
])

// PostgreSQL SQLSTATEs meaning "the server cannot serve now": class 08 (connection
// exception) is matched by prefix; 53300 too many connections, 53xxx out of resources;
// 57P01..57P03 admin/crash shutdown and "cannot connect now" (starting up, shutting down).
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|53[0-9A-Z]{3}|57P0[1-3])$/

// pg raises these without a code: a connection lost mid-query, a pool that could not hand
// out a connection in time, a client whose connection already failed.
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Query read timeout)/

function isUnavailableOne(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null
  if (!e || typeof e !== 'object') return false
  if (typeof e.code === 'string') {
    if (UNAVAILABLE_SQLITE.has(e.code.replace(/^(SQLITE_[A-Z]+).*$/, '$1'))) return true
    if (UNAVAILABLE_NETWORK.has(e.code) || UNAVAILABLE_SQLSTATE.test(e.code)) return true
    if (UNAVAILABLE_FILESYSTEM.has(e.code)) return true
  }
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message)
}

/** True when an error means storage cannot serve right now (→ 503), not a bug (→ 500). */
export function isStorageUnavailable(err: unknown): boolean {
  // note: a connect to several addresses (localhost → ::1 and 127.0.0.1) fails with an
  // AggregateError; a wrapped error keeps the original as its cause
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    if (isUnavailableOne(e)) return true
    const nested = (e as { errors?: unknown }).errors
    if (Array.isArray(nested) && nested.some(isUnavailableOne)) return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}
