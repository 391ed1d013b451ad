import type { Db } from '../../db/database.ts'
import { writerOf } from '../../db/writer.ts'
import { systemClock } from '../../lib/clock.ts'
import type { ServiceDeps } from '../service-deps.ts'
import type { StatusChange } from '../statuses/status-events.ts'
import {
  announceTimedWrites,
  applyTimedWrites,
  type TimedWrite,
} from '../statuses/statuses.service.ts'

// The timed worker (docs/architecture.md#timed-changes): values written at a time set in
// advance (a value's end, a schedule's fire) are written here, on every instance, each
// exactly once. Work comes from sources (TimedSource); a pass asks each source to claim
// what is due in a transaction and writes it, in the same transaction, through the statuses
// module's ordinary update path (applyTimedWrites): the claim and the write commit
// together, so neither a crash nor a second instance makes a second write. Between passes
// the worker sleeps until the earliest due time any source reports, or at most `pollMs`:
// the bound within which it hears of work another instance added.
//
// Contract for a source:
// - claimDue(tx, window, limit) claims at most `limit` due items in `tx` with
//   claimRowsForUpdate (rows another instance holds are passed over), marks each done
//   (cleared, or moved to its next due time) in `tx`, and returns how many it claimed and
//   the writes to make: items due in `window` (`since` < due ≤ `now`); items due before
//   `since` (missed by more than TIMED_CATCH_UP_MS) are marked done without a write, and of
//   several items of one status missed, only the latest is written.
// - nextDue(db) answers the earliest due time of its unclaimed items (an ISO timestamp), or
//   null.
// A source registers with `app.timed.register(source)` from its plugin (which declares the
// `timed` plugin as a dependency), and calls `app.timed.wake()` after it adds work, so that
// this instance looks at once.

/** A source of timed work (see the contract above). */
export interface TimedSource {
  /** Names the source in logs. */
  readonly name: string
  claimDue(tx: Db, window: DueWindow, limit: number): Promise<ClaimedWork>
  nextDue(db: Db): Promise<string | null>
}

/** What a pass takes: items due by `now`, written when due after `since`. */
export interface DueWindow {
  now: string
  since: string
}

/** What one claim took: how many items (written or skipped), and the writes to make. */
export interface ClaimedWork {
  claimed: number
  writes: TimedWrite[]
}

/** How long after its time a missed item is still written (at start, after downtime). */
export const TIMED_CATCH_UP_MS = 24 * 60 * 60 * 1000

/** The longest the worker sleeps: how soon it hears of work another instance added. */
export const TIMED_POLL_MS = 1000

/** The most items one transaction claims from one source. */
export const TIMED_BATCH = 1000

export interface TimedWorkerOptions {
  deps: ServiceDeps
  pollMs?: number
  batchSize?: number
  onError: (err: unknown, source?: string) => void
}

/**
 * The worker of one instance. `start` runs a first pass at once (the catch-up after
 * downtime), then one whenever work falls due, at least every `pollMs`.
 */
export class TimedWorker {
  readonly #options: TimedWorkerOptions
  readonly #sources: TimedSource[] = []
  #running: Promise<number> | undefined
  #timer: NodeJS.Timeout | undefined
  #started = false
  #closed = false
  #again = false

  constructor(options: TimedWorkerOptions) {
    this.#options = options
  }

  /** Adds a source of timed work; its items are written from the next pass on. */
  register(source: TimedSource): void {
    this.#sources.push(source)
    this.wake()
  }

  start(): void {
    this.#started = true
    this.wake()
  }

  /** Runs a pass soon: work was added or moved on this instance. */
  wake(): void {
    if (!this.#started || this.#closed) return
    this.#schedule(0)
  }

  /**
   * One pass now, after the one under way if any (tests call it, with the clock they moved);
   * resolves with the number of values it wrote.
   */
  async runOnce(): Promise<number> {
    while (this.#running) await this.#running.catch(() => 0)
    return this.#run()
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    await this.#running?.catch(() => 0)
  }

  #schedule(delayMs: number): void {
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => void this.#pass(), Math.max(0, delayMs))
    this.#timer.unref()
  }

  async #pass(): Promise<void> {
    if (this.#closed) return
    if (this.#running) {
      // a pass is under way: another follows it
      this.#again = true
      return
    }
    await this.#run().catch((err) => this.#options.onError(err))
    if (this.#closed) return
    const poll = this.#options.pollMs ?? TIMED_POLL_MS
    if (this.#again) {
      this.#again = false
      this.#schedule(0)
      return
    }
    const next = await this.#nextDue().catch((err) => {
      this.#options.onError(err)
      return null
    })
    const now = this.#now()
    this.#schedule(next === null ? poll : Math.min(poll, Date.parse(next) - now))
  }

  #now(): number {
    return (this.#options.deps.clock ?? systemClock).now()
  }

  async #nextDue(): Promise<string | null> {
    let earliest: string | null = null
    for (const source of this.#sources) {
      const due = await source.nextDue(this.#options.deps.db)
      if (due !== null && (earliest === null || due < earliest)) earliest = due
    }
    return earliest
  }

  #run(): Promise<number> {
    const run = this.#writeDue().finally(() => {
      if (this.#running === run) this.#running = undefined
    })
    this.#running = run
    return run
  }

  /** Writes everything due by now (the clock's), source by source, batch after batch. */
  async #writeDue(): Promise<number> {
    const { deps, batchSize = TIMED_BATCH } = this.#options
    const nowMs = this.#now()
    const window: DueWindow = {
      now: new Date(nowMs).toISOString(),
      since: new Date(nowMs - TIMED_CATCH_UP_MS).toISOString(),
    }
    let written = 0
    for (const source of [...this.#sources]) {
      try {
        for (;;) {
          const { claimed, changes } = await writerOf(deps).run(async (tx) => {
            const work = await source.claimDue(tx, window, batchSize)
            const applied: StatusChange[] = await applyTimedWrites(tx, deps, work.writes)
            return { claimed: work.claimed, changes: applied }
          })
          written += changes.length
          await announceTimedWrites(deps, changes)
          if (claimed < batchSize || this.#closed) break
        }
      } catch (err) {
        // one source's failure leaves the others their turn; its work waits for the next pass
        this.#options.onError(err, source.name)
      }
    }
    return written
  }
}
