import type BetterSqlite3 from 'better-sqlite3'
import type { SqliteDatabase, SqliteStatement } from 'kysely'
import { LRUCache } from 'lru-cache'

/**
 * A better-sqlite3 database whose prepared statements are reused: Kysely prepares every
 * query it runs, and preparing costs more than running a point query. Bounded (least
 * recently used go first), since a query with a variable-length IN list or a batch insert
 * yields a new SQL text each time.
 */
export function withStatementCache(db: BetterSqlite3.Database, max = 512): SqliteDatabase {
  const cache = new LRUCache<string, SqliteStatement>({ max })
  return {
    close: () => db.close(),
    prepare(sqlText: string): SqliteStatement {
      let statement = cache.get(sqlText)
      if (statement === undefined) {
        statement = db.prepare(sqlText) as unknown as SqliteStatement
        cache.set(sqlText, statement)
      }
      return statement
    },
  }
}
