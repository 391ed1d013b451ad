import { PostgresAdapter, sql, type Transaction } from 'kysely'
import type { DB } from './database.ts'

/**
 * Holds a named lock until the transaction ends, so transactions taking the same name run
 * one after another, across every instance on the database. Use it where a rule reads
 * before it writes (a count, "is there any user yet") and concurrent writers must not both
 * pass the check.
 *
 * note: on PostgreSQL a transaction-scoped advisory lock on a 64-bit hash of the name (a
 * hash collision only serialises two unrelated transactions). On SQLite nothing is needed:
 * the one connection already runs transactions one at a time.
 */
export async function lockForTransaction(tx: Transaction<DB>, name: string): Promise<void> {
  if (!(tx.getExecutor().adapter instanceof PostgresAdapter)) return
  await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(tx)
}
