import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import { type Writer, writerOf } from '../../db/writer.ts'
import { removeRulesOfDeletedStatus } from '../outbox/default-rules.service.ts'
import {
  claimDeletion,
  deleteHistoryBatch,
  finishDeletion,
  HISTORY_BATCH,
  pendingDeletions,
} from './history.repository.ts'

// A deleted status is gone for readers in its delete's transaction; its history (and its
// notification rules) go after, here, in batches of at most HISTORY_BATCH rows, one
// transaction each, with a turn of the event loop between them, so requests keep being answered however large the history
// (docs/api.md#delete-a-status, docs/operations.md#history-sweep).

export interface SweepDeps {
  db: Kysely<DB>
  /** How the batches commit (group commit on SQLite); one transaction each when absent. */
  writer?: Writer
}

export interface SweepOptions {
  /** The most history rows one transaction deletes (tests make it small). */
  batchSize?: number
  /** Stops the sweep between batches (shutdown); what is left waits for the next sweep. */
  stopped?: () => boolean
}

/**
 * One batch of one deleted status's history, in one transaction: at most `batchSize` rows.
 * The deletion's record goes with the batch that finds fewer rows than that, so a sweep
 * that stops between batches (a crash, a shutdown) leaves the record, and the next one
 * finishes the work. On PostgreSQL the record is locked for the batch, so instances
 * sweeping at once take one status's batches in turn. Returns the rows deleted and whether
 * the status's history is all gone.
 */
export async function sweepBatch(
  deps: SweepDeps,
  statusId: string,
  batchSize: number = HISTORY_BATCH,
): Promise<{ deleted: number; done: boolean }> {
  return writerOf(deps).run(async (tx) => {
    // another sweep finished it meanwhile
    if (!(await claimDeletion(tx, statusId))) return { deleted: 0, done: true }
    // its notification rules go first, in batches of the same size (docs/notifications.md#rules)
    if ((await removeRulesOfDeletedStatus(tx, statusId, batchSize)) === batchSize)
      return { deleted: 0, done: false }
    const deleted = await deleteHistoryBatch(tx, statusId, batchSize)
    const done = deleted < batchSize
    if (done) await finishDeletion(tx, statusId)
    return { deleted, done }
  })
}

/**
 * Sweeps the history of every deleted status, batch after batch, yielding to the event loop
 * between batches. Returns the rows deleted.
 */
export async function sweepDeletedHistory(
  deps: SweepDeps,
  options: SweepOptions = {},
): Promise<number> {
  const batchSize = options.batchSize ?? HISTORY_BATCH
  const stopped = options.stopped ?? (() => false)
  let total = 0
  for (;;) {
    const pending = await pendingDeletions(deps.db, 100)
    if (pending.length === 0) return total
    for (const statusId of pending) {
      for (;;) {
        if (stopped()) return total
        const { deleted, done } = await sweepBatch(deps, statusId, batchSize)
        total += deleted
        await nextTurn()
        if (done) break
      }
    }
  }
}

export interface HistorySweeperOptions {
  deps: SweepDeps
  /** How often it looks for deletions nobody swept (one cut short by a crash or shutdown). */
  intervalMs: number
  batchSize?: number
  onError: (err: unknown) => void
}

/**
 * Runs the sweep in the background of a serving process: at start (deletions left by the
 * previous run), when a status is deleted (`kick`), and on a timer (deletions through
 * another instance whose sweep was cut short). One sweep at a time per process.
 */
export class HistorySweeper {
  readonly #options: HistorySweeperOptions
  #running: Promise<void> | undefined
  #again = false
  #closed = false
  #timer: NodeJS.Timeout | undefined

  constructor(options: HistorySweeperOptions) {
    this.#options = options
  }

  start(): void {
    this.#timer = setInterval(() => this.kick(), this.#options.intervalMs)
    this.#timer.unref()
    this.kick()
  }

  /** Sweeps now, or again right after the sweep under way. */
  kick(): void {
    if (this.#closed) return
    if (this.#running) {
      this.#again = true
      return
    }
    this.#running = this.#run().finally(() => {
      this.#running = undefined
      if (this.#again) {
        this.#again = false
        this.kick()
      }
    })
  }

  /** Resolves once no sweep is under way (tests). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running
  }

  /** Stops after the batch under way; the rest waits for the next start. */
  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#timer)
    await this.#running
  }

  async #run(): Promise<void> {
    try {
      await sweepDeletedHistory(this.#options.deps, {
        batchSize: this.#options.batchSize,
        stopped: () => this.#closed,
      })
    } catch (err) {
      this.#options.onError(err)
    }
  }
}
