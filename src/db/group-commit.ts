import { CompiledQuery, type Kysely, type Transaction } from 'kysely'
import type { DB } from './database.ts'
import type { Writer } from './writer.ts'

interface Pending {
  work: (tx: Transaction<DB>) => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (reason: unknown) => void
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

const SAVEPOINT = CompiledQuery.raw('savepoint unit')
const RELEASE = CompiledQuery.raw('release unit')
const ROLLBACK_TO = CompiledQuery.raw('rollback to unit')

/** Runs each unit of a batch in its own savepoint on `tx`, recording its outcome. */
async function runUnits(tx: Transaction<DB>, batch: Pending[], outcomes: Outcome[]): Promise<void> {
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
        // note: SQLite already rolled the whole transaction back (disk full, I/O error): the
        // batch fails, with the unit's own error as the cause (503)
        throw error
      }
      outcomes.push({ ok: false, error })
    }
  }
}

/** How an engine makes a group-committed batch durable (sqlite/sqlite-durability.ts); all optional. */
export interface BatchHooks {
  /** Awaited before a batch begins, on its connection (e.g. a checkpoint that must not overlap writes). */
  beforeBatch?(connection: Kysely<DB>): Promise<void> | void
  /** Run on the batch's connection right before BEGIN … */
  enter?: CompiledQuery
  /** … and right after COMMIT or ROLLBACK. */
  leave?: CompiledQuery
  /**
   * Called after COMMIT with the number of units: resolves once the batch is durable. No unit
   * of the batch settles before; later batches run meanwhile. Without it the commit itself
   * must be durable (synchronous=FULL).
   */
  afterCommit?(units: number): Promise<void>
}

/**
 * Group commit for an embedded engine whose every commit costs an fsync (SQLite). Units that
 * arrive together share one transaction and one fsync; each runs inside its own savepoint,
 * so a unit that fails is rolled back alone and never fails its neighbours. Every unit
 * settles only after the shared commit is durable, so an acknowledged write survives power
 * loss. If the commit itself fails, or the batch cannot be made durable, every unit of the
 * batch fails with it.
 */
export function groupCommitWriter(
  db: Kysely<DB>,
  { maxBatch = 128, hooks = {} }: { maxBatch?: number; hooks?: BatchHooks } = {},
): Writer {
  let queue: Pending[] = []
  let scheduled = false

  /** Runs a batch in one transaction; returns each unit's outcome once it has committed. */
  async function commitBatch(batch: Pending[]): Promise<Outcome[] | undefined> {
    const outcomes: Outcome[] = []
    try {
      await db.connection().execute(async (connection) => {
        await hooks.beforeBatch?.(connection)
        if (hooks.enter) await connection.executeQuery(hooks.enter)
        try {
          await connection.transaction().execute((tx) => runUnits(tx, batch, outcomes))
        } finally {
          if (hooks.leave) await connection.executeQuery(hooks.leave)
        }
      })
    } catch (commitError) {
      batch.forEach((unit, i) => {
        const outcome = outcomes[i]
        unit.reject(outcome && !outcome.ok ? outcome.error : commitError)
      })
      return undefined
    }
    return outcomes
  }

  const settle = (batch: Pending[], outcomes: Outcome[], durabilityError?: unknown) =>
    batch.forEach((unit, i) => {
      const outcome = outcomes[i] as Outcome
      if (!outcome.ok) unit.reject(outcome.error)
      else if (durabilityError !== undefined) unit.reject(durabilityError)
      else unit.resolve(outcome.value)
    })

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch)
      queue = queue.slice(batch.length)
      const outcomes = await commitBatch(batch)
      if (outcomes === undefined) continue
      // note: not awaited: the next batch runs while this one is made durable
      const durable = hooks.afterCommit?.(batch.length)
      if (durable === undefined) settle(batch, outcomes)
      else
        durable.then(
          () => settle(batch, outcomes),
          (error: unknown) => settle(batch, outcomes, error),
        )
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
