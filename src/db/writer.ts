import type { Kysely, Transaction } from 'kysely'
import type { DB } from './database.ts'

/** Runs units of write work, each atomically; how they are committed is the engine's business. */
export interface Writer {
  run<T>(work: (tx: Transaction<DB>) => Promise<T>): Promise<T>
}

/** One transaction per unit: right where the engine commits cheaply or in parallel (PostgreSQL). */
export const transactionPerWrite = (db: Kysely<DB>): Writer => ({
  run: (work) => db.transaction().execute(work),
})

/** The deps' writer, or one transaction per write when none was given (the CLI, store tests). */
export const writerOf = (deps: { db: Kysely<DB>; writer?: Writer }): Writer =>
  deps.writer ?? transactionPerWrite(deps.db)
