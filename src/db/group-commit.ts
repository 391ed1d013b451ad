import type { Kysely, Transaction } from 'kysely'
import type { DB } from './database.ts'
import { rawStatement } from './prepared.ts'

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

interface Pending {
  work: (tx: Transaction<DB>) => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (reason: unknown) => void
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

const SAVEPOINT = rawStatement('savepoint unit')
const RELEASE = rawStatement('release unit')
const ROLLBACK_TO = rawStatement('rollback to unit')

/**
 * Group commit for an embedded engine whose every commit costs an fsync (SQLite with
 * synchronous=FULL). Units that arrive together share one transaction and one fsync; each
 * runs inside its own savepoint, so a unit that fails is rolled back alone and never fails
 * its neighbours. Every unit settles only after the shared commit, so an acknowledged write
 * is durable. If the commit itself fails, every unit of the batch fails with it.
 */
export function groupCommitWriter(db: Kysely<DB>, maxBatch = 128): Writer {
  let queue: Pending[] = []
  let scheduled = false

  async function commitBatch(batch: Pending[]): Promise<void> {
    const outcomes: Outcome[] = []
    try {
      await db.transaction().execute(async (tx) => {
        for (const unit of batch) {
          await tx.executeQuery(SAVEPOINT)
          try {
            const value = await unit.work(tx)
            await tx.executeQuery(RELEASE)
            outcomes.push({ ok: true, value })
          } catch (error) {
            try {
              await tx.executeQuery(ROLLBACK_TO)
              await tx.executeQuery(RELEASE)
            } catch {
              // note: SQLite already rolled the whole transaction back (disk full, I/O error):
              // the batch fails, with the unit's own error as the cause (503, not a 500)
              throw error
            }
            outcomes.push({ ok: false, error })
          }
        }
      })
    } catch (commitError) {
      batch.forEach((unit, i) => {
        const outcome = outcomes[i]
        unit.reject(outcome && !outcome.ok ? outcome.error : commitError)
      })
      return
    }
    batch.forEach((unit, i) => {
      const outcome = outcomes[i] as Outcome
      if (outcome.ok) unit.resolve(outcome.value)
      else unit.reject(outcome.error)
    })
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch)
      queue = queue.slice(batch.length)
      await commitBatch(batch)
    }
    scheduled = false
  }

  return {
    run<T>(work: (tx: Transaction<DB>) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
        if (scheduled) return
        scheduled = true
        // note: setImmediate, not a microtask: every request parsed in this turn of the
        // event loop joins the batch before it starts
        setImmediate(() => void drain())
      })
    },
  }
}
