import type { Transaction } from 'kysely'
import type { DB, Db } from './database.ts'
import type { RowClaimable, RowLockable } from './engine.ts'
import { engineOf } from './engines.ts'

/**
 * Holds a named lock until the transaction ends, so transactions taking the same name run
 * one after another, across every instance on the database. Use it where a rule reads
 * before it writes (a count, "is there any user yet") and concurrent writers must not both
 * pass the check. How is the engine's business (Engine.advisoryLock).
 */
export async function lockForTransaction(tx: Transaction<DB>, name: string): Promise<void> {
  await engineOf(tx).advisoryLock(tx, name)
}

/**
 * The query, made to lock the rows it reads until the transaction ends where concurrent
 * writers could otherwise both read the row as it was (Engine.lockRows): for a row read to
 * be written, so that every check on it still holds when the write lands.
 */
export const lockRowsForWrite = <Q extends RowLockable<Q>>(db: Db, query: Q): Q =>
  engineOf(db).lockRows(query)

/**
 * The query, made to claim the rows it reads for this transaction, passing over rows another
 * transaction holds (Engine.claimRows): for queues several instances take work from, so
 * that each row is taken by one of them.
 */
export const claimRowsForUpdate = <Q extends RowClaimable<Q>>(db: Db, query: Q): Q =>
  engineOf(db).claimRows(query)
