import type SQLite from 'better-sqlite3'
import { type DatabaseConnection, type Driver, type SqliteDatabase, SqliteDialect } from 'kysely'

/**
 * Kysely's SqliteDialect, except that a rollback SQLite has already done is not done again.
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
    const rollback = driver.rollbackTransaction.bind(driver)
    driver.rollbackTransaction = async (connection: DatabaseConnection) => {
      if (sqlite.inTransaction) await rollback(connection)
    }
    return driver
  }
}
