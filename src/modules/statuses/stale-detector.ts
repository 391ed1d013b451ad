import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import { type Writer, writerOf } from '../../db/writer.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import { recordStatusEvent, STATUS_STALE } from '../outbox/outbox.service.ts'
import { STALE_CHECK_INTERVAL_MS } from './staleness.ts'
import type { StatusChange, StatusEventBus } from './status-events.ts'
import { claimStaleStatuses, dueStaleStatusIds } from './statuses.repository.ts'
import { notifiedStatus } from './statuses.service.ts'

// The stale detector (docs/notifications.md#staleness): every instance looks, now and then,
// for statuses whose silence turned stale and was not announced, and announces each exactly
// once: the claim (stale_notified_at) and the `status.stale` outbox event commit in one
// transaction, so neither a crash nor a second instance makes a second one. Whether a
// status reads stale does not wait for it: reads compare stale_at with the clock.

declare module 'fastify' {
  interface FastifyInstance {
    /** The instance's stale detector (tests run a pass with `runOnce` after moving the clock). */
    staleDetector: StaleDetector
  }
}

/** The most statuses one transaction claims. */
export const STALE_BATCH = 200

export interface StaleDetectorDeps {
  db: Kysely<DB>
  writer?: Writer
  /** Told of each status that turned stale, so live streams show it. */
  events?: StatusEventBus
  clock?: Clock
  /** The service's external origin, for the links the events carry. */
  linkBase?: () => string
}

export interface StaleDetectorOptions {
  deps: StaleDetectorDeps
  intervalMs?: number
  batchSize?: number
  onError: (err: unknown) => void
}

/** Claims one batch in one transaction; returns the changes to announce. */
async function claimBatch(
  deps: StaleDetectorDeps,
  now: string,
  batchSize: number,
): Promise<{ due: number; claimed: number; changes: StatusChange[] }> {
  return writerOf(deps).run(async (tx) => {
    const due = await dueStaleStatusIds(tx, now, batchSize)
    const rows = await claimStaleStatuses(tx, due, now)
    const changes: StatusChange[] = []
    for (const row of rows) {
      // note: at is when the silence turned stale, not when it was noticed; nothing changed,
      // so previousValue is the value
      await recordStatusEvent(
        tx,
        STATUS_STALE,
        notifiedStatus(deps, row, row.value),
        row.stale_at as string,
      )
      // announced after the commit; the status event above relays it between instances
      changes.push({ statusId: row.id, version: Number(row.version), kind: 'status' })
    }
    return { due: due.length, claimed: rows.length, changes }
  })
}

/**
 * Announces every silence due by now (the clock's): batch after batch until none is left.
 * Returns how many statuses this call claimed.
 */
export async function detectStale(
  deps: StaleDetectorDeps,
  batchSize: number = STALE_BATCH,
): Promise<number> {
  const now = new Date((deps.clock ?? systemClock).now()).toISOString()
  let total = 0
  for (;;) {
    const { due, claimed, changes } = await claimBatch(deps, now, batchSize)
    total += claimed
    for (const change of changes) await deps.events?.publish(change)
    // fewer due than a batch: none is left (a candidate another instance took is not counted)
    if (due < batchSize) return total
  }
}

/**
 * Runs the detector in the background of a serving process: at start, then every
 * `intervalMs`. One pass at a time per process.
 */
export class StaleDetector {
  readonly #options: StaleDetectorOptions
  #running: Promise<number> | undefined
  #timer: NodeJS.Timeout | undefined
  #closed = false

  constructor(options: StaleDetectorOptions) {
    this.#options = options
  }

  start(): void {
    this.#timer = setInterval(
      () => void this.#pass(),
      this.#options.intervalMs ?? STALE_CHECK_INTERVAL_MS,
    )
    this.#timer.unref()
    void this.#pass()
  }

  /**
   * One pass now, after the one under way if any (tests call it, with the clock they moved);
   * resolves with the number of statuses this pass announced.
   */
  async runOnce(): Promise<number> {
    while (this.#running) await this.#running.catch(() => 0)
    return this.#run()
  }

  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#timer)
    await this.#running?.catch(() => 0)
  }

  #pass(): Promise<number> {
    if (this.#closed || this.#running) return Promise.resolve(0)
    return this.#run().catch((err) => {
      this.#options.onError(err)
      return 0
    })
  }

  #run(): Promise<number> {
    const run = detectStale(this.#options.deps, this.#options.batchSize).finally(() => {
      if (this.#running === run) this.#running = undefined
    })
    this.#running = run
    return run
  }
}
