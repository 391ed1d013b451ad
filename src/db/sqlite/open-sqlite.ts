import { closeSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, sql } from 'kysely'
import { InProcessEventBus } from '../../lib/event-bus.ts'
import type { DB } from '../database.ts'
import {
  type Database,
  type DatabaseOptions,
  DEFAULT_BUSY_TIMEOUT_MS,
  type StorageGauge,
} from '../engine.ts'
import { groupCommitWriter } from '../group-commit.ts'
import { OtherCommits, SqliteEventBus } from './other-commits.ts'
import { SqliteDialectWithSafeRollback } from './sqlite-dialect.ts'
import { sqliteDurability } from './sqlite-durability.ts'
import { withStatementCache } from './statement-cache.ts'

const WAL_SIZE_LIMIT = 128 * 1024 * 1024

/** Opens a SQLite database file (or `:memory:`), in WAL mode unless `readOnly`. */
export function openSqlite(path: string, options: DatabaseOptions = {}): Database {
  if (path === '')
    throw new Error('DATABASE_URL sqlite: needs a path, e.g. sqlite:./data/statusd.db')
  const readOnly = options.readOnly ?? false
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS
  const file = path === ':memory:' ? path : resolve(path)
  if (file !== ':memory:' && !readOnly) createPrivately(file)
  const source = file === ':memory:' ? (options.memoryImage ?? file) : file
  const sqlite = new SQLite(source, { readonly: readOnly, fileMustExist: readOnly })
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
    file === ':memory:' || readOnly ? undefined : sqliteDurability(file, options.checkpoints)
  if (durability) {
    // checkpoints run on the durability's own thread, never inside a request's commit
    sqlite.pragma('wal_autocheckpoint = 0')
    // the log restarts at about 64 MiB (sqlite-durability.ts); should it ever grow far past
    // that, its file is cut back to this size when it restarts, not kept at its largest
    sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`)
  }
  // every commit is an fsync: writes arriving together share one
  const writer = groupCommitWriter(db, { hooks: durability })
  // an in-memory database is this connection's alone: nobody else can commit to it
  const others = file === ':memory:' || readOnly ? undefined : new OtherCommits(sqlite)
  return {
    db,
    engine: 'sqlite',
    writer,
    describe: file === ':memory:' ? 'sqlite (in memory)' : `sqlite ${file}`,
    gauges: file === ':memory:' ? [] : sqliteFileGauges({ database: file, log: `${file}-wal` }),
    // the pages the database holds (in memory too), and the log not yet copied back into them
    async sizeBytes() {
      const pages = Number(sqlite.pragma('page_count', { simple: true }))
      const pageSize = Number(sqlite.pragma('page_size', { simple: true }))
      const log = file === ':memory:' ? 0 : sizeOf(`${file}-wal`)
      return pages * pageSize + (Number.isFinite(log) ? log : 0)
    },
    outboxTail: undefined,
    // one process serves the database: the bus never leaves it; what another process (the
    // CLI) commits is noticed within OTHER_COMMITS_INTERVAL_MS and resyncs the listeners
    openEventBus: async (busOptions) =>
      others ? new SqliteEventBus(busOptions, others) : new InProcessEventBus(busOptions),
    // one process serves the database: it counts requests in its own memory
    requestCounter: null,
    async ping() {
      try {
        sqlite.prepare('select 1').get()
        return true
      } catch {
        return false
      }
    },
    // the header's user_version (statusd never reads it) written back as it is: a real
    // commit, a page to the log, through the group commit like any write
    async probeWrite() {
      await writer.run(async (tx) => {
        const { rows } = await sql<{ user_version: number }>`pragma user_version`.execute(tx)
        const version = Math.trunc(Number(rows[0]?.user_version ?? 0))
        await sql.raw(`pragma user_version = ${version}`).execute(tx)
      })
    },
    async close() {
      others?.close()
      await durability?.close()
      await db.destroy()
    },
  }
}

/**
 * Creates what is missing of a database file and its directories, private to the service's
 * user (docs/operations.md#storage-sqlite): directories 0700, the file 0600 (SQLite would make
 * it 0644). SQLite gives the -wal and -shm files it creates the database file's mode. What
 * exists already keeps the mode its operator gave it.
 */
function createPrivately(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  try {
    // note: 'wx' creates it only if it does not exist, so that an existing file is never touched
    closeSync(openSync(file, 'wx', 0o600))
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err
  }
}

/**
 * The sizes of a database file and its write-ahead log, read at each scrape: the log's is
 * the one to alert on, should a long reader (a backup, a sqlite3 shell left open) keep it
 * from restarting at about 64 MiB.
 */
export function sqliteFileGauges(files: { database: string; log: string }): StorageGauge[] {
  return [
    {
      name: 'statusd_sqlite_wal_bytes',
      help: 'Size of the SQLite write-ahead log file (the -wal file)',
      read: () => sizeOf(files.log),
    },
    {
      name: 'statusd_sqlite_database_bytes',
      help: 'Size of the SQLite database file',
      read: () => sizeOf(files.database),
    },
  ]
}

/**
 * A file's size now: 0 when it does not exist (SQLite removes the log at a clean close), NaN
 * when it cannot be read, so that a scrape never fails for it.
 */
function sizeOf(path: string): number {
  try {
    return statSync(path, { throwIfNoEntry: false })?.size ?? 0
  } catch {
    return Number.NaN
  }
}
