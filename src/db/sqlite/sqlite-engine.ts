import { closeSync, existsSync, openSync, readSync, rmSync } from 'node:fs'
import { SqliteAdapter } from 'kysely'
import type { Engine, WriteRefusal } from '../engine.ts'
import { openSqlite } from './open-sqlite.ts'
import { sqliteBackupSupport } from './sqlite-backup.ts'
import { sqliteMigrationSteps } from './sqlite-migration-steps.ts'

/** Parses `sqlite:<path>` / `sqlite::memory:`; returns null for other schemes. */
export function sqlitePath(url: string): string | null {
  if (!url.startsWith('sqlite:')) return null
  const rest = url.slice('sqlite:'.length)
  return rest === ':memory:' ? ':memory:' : rest.replace(/^\/\/(?=\/)/, '')
}

// SQLite's result codes meaning "storage cannot serve now"; extended codes
// (SQLITE_IOERR_WRITE) count as their primary one.
const UNAVAILABLE_CODES = new Set([
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

// Of those, the ones that say why writes are refused (engine.ts, WriteRefusal).
const WRITE_REFUSALS: Record<string, WriteRefusal> = {
  SQLITE_FULL: 'full',
  ENOSPC: 'full',
  EDQUOT: 'full',
  SQLITE_READONLY: 'readOnly',
  EROFS: 'readOnly',
}

/**
 * A SQLite file's journal mode, from its header ("SQLite format 3", then read and write
 * versions: 2 for WAL, 1 for a rollback journal); null for a file that is not SQLite.
 */
function journalOf(path: string): 'wal' | 'rollback' | null {
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const header = Buffer.alloc(20)
    if (readSync(fd, header, 0, 20, 0) < 20) return null
    if (header.toString('latin1', 0, 16) !== 'SQLite format 3\0') return null
    return header[18] === 2 ? 'wal' : 'rollback'
  } catch {
    return null
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** SQLite: one file, one process serving it, every commit an fsync. */
export const sqliteEngine: Engine = {
  name: 'sqlite',
  urlForms: ['sqlite:<path>', 'sqlite::memory:'],
  recognizes: (url) => url.startsWith('sqlite:'),
  problemWithUrl: (url) =>
    url === 'sqlite:'
      ? 'DATABASE_URL sqlite: needs a path, e.g. sqlite:./data/statusd.db'
      : undefined,
  // a path holds no secret
  redactUrl: (url) => url,
  open: (url, options) => openSqlite(sqlitePath(url) ?? '', options),
  ownsAdapter: (adapter) => adapter instanceof SqliteAdapter,
  // writes never overlap: every write transaction begins IMMEDIATE (sqlite-dialect.ts),
  // holding the database's one write lock from its first read to its end
  lockRows: (query) => query,
  // the same: one write transaction at a time holds the whole database, so what it reads
  // no other can claim before it commits
  claimRows: (query) => query,
  // nothing to take, for the same reason: the transaction holds the write lock already,
  // across every process on the file
  advisoryLock: async () => {},
  classifyError({ code }) {
    if (typeof code !== 'string') return undefined
    if (UNAVAILABLE_CODES.has(code.replace(/^(SQLITE_[A-Z]+).*$/, '$1'))) return 'unavailable'
    if (UNAVAILABLE_FILESYSTEM.has(code)) return 'unavailable'
    return undefined
  },
  writeRefusal({ code }) {
    if (typeof code !== 'string') return undefined
    return WRITE_REFUSALS[code.replace(/^(SQLITE_[A-Z]+).*$/, '$1')]
  },
  migrationSteps: sqliteMigrationSteps,
  copy: {
    source(url) {
      const path = sqlitePath(url) ?? ''
      // note: opening a missing file would create an empty one: a typo must not do that
      if (path === ':memory:' || !existsSync(path)) return { refused: `no database at ${url}` }
      // the source is only read: a file that is not SQLite is refused before it is opened, and
      // one not in WAL mode (a `VACUUM INTO` backup) is opened read-only, as it is: opened as
      // statusd opens its own, it would be switched to WAL mode
      const journal = journalOf(path)
      if (journal === null)
        return { refused: `${url} is not a statusd database (not a SQLite file)` }
      return { options: { readOnly: journal === 'rollback' } }
    },
    discardNewTarget(url) {
      const path = sqlitePath(url) ?? ''
      if (path === ':memory:' || existsSync(path)) return () => {}
      return () => {
        for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true })
      }
    },
  },
  backup: sqliteBackupSupport(sqlitePath),
}
