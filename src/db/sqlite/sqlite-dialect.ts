import type SQLite from 'better-sqlite3'
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  SqliteDialect,
} from 'kysely'

const BEGIN_IMMEDIATE = CompiledQuery.raw('begin immediate')
const BEGIN = CompiledQuery.raw('begin')

/**
 * Kysely's SqliteDialect, except that transactions begin IMMEDIATE, and that a rollback
 * SQLite has already done is not done again.
 *
 * note: a transaction begun DEFERRED (Kysely's `begin`) that reads before it writes, as
 * every write of statusd does, takes the write lock only at its first write, and SQLite
 * does not wait (busy_timeout) for a lock a read transaction upgrades to: while another
 * process (a CLI command, a backup) held the lock, every write failed at once with 503.
 * Begun IMMEDIATE, it takes the lock first, waiting up to busy_timeout for it. A transaction
 * marked `setAccessMode('read only')` (the copy's snapshot of a live source) begins
 * DEFERRED: it never takes the lock, and the server keeps writing while it reads.
 *
 * note: on SQLITE_FULL, SQLITE_IOERR and some other errors SQLite rolls the transaction back
 * itself. Kysely then sends ROLLBACK anyway, which fails with "cannot rollback - no
 * transaction is active", and that error replaced the real one: a full disk or a read-only
 * file answered 500 internalError instead of 503 unavailable.
 */
export class SqliteDialectWithSafeRollback extends SqliteDialect {
  readonly #sqlite: SQLite.Database

  /** `database` is what Kysely runs queries on (the statement cache); `sqlite` is under it. */
  constructor(sqlite: SQLite.Database, database: SqliteDatabase = sqlite) {
    super({ database })
    this.#sqlite = sqlite
  }

  override createDriver(): Driver {
    const driver = super.createDriver()
    const sqlite = this.#sqlite
    driver.beginTransaction = async (connection, settings) => {
      await connection.executeQuery(settings.accessMode === 'read only' ? BEGIN : BEGIN_IMMEDIATE)
    }
    const rollback = driver.rollbackTransaction.bind(driver)
    driver.rollbackTransaction = async (connection: DatabaseConnection) => {
      if (sqlite.inTransaction) await rollback(connection)
    }
    return driver
  }
}
