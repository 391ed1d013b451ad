import type BetterSqlite3 from 'better-sqlite3'
import type { SqliteDatabase, SqliteStatement } from 'kysely'

/**
 * A better-sqlite3 database whose prepared statements are reused: Kysely prepares every
 * query it runs, and preparing costs more than running a point query. Bounded (LRU), since
 * a query with a variable-length IN list or a batch insert yields a new SQL text each time.
 */
export function withStatementCache(db: BetterSqlite3.Database, max = 512): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>()
  return {
    close: () => db.close(),
    prepare(sqlText: string): SqliteStatement {
      const cached = cache.get(sqlText)
      if (cached) {
        // re-insert: Map order is the LRU order
        cache.delete(sqlText)
        cache.set(sqlText, cached)
        return cached
      }
      const statement = db.prepare(sqlText) as unknown as SqliteStatement
      cache.set(sqlText, statement)
      if (cache.size > max) cache.delete(cache.keys().next().value as string)
      return statement
    },
  }
}
