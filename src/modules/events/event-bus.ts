import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/database.ts'
import { type Writer, writerOf } from '../../db/group-commit.ts'

/**
 * A committed write to a status, as the event bus carries it. Deliberately small (no status
 * body): it must fit a PostgreSQL NOTIFY payload, and every instance reads the current row
 * itself once per change, however many clients it serves.
 */
export interface StatusChange {
  statusId: string
  /** The status's version after the write (`statuses.version`); the event id clients see. */
  version: number
  /**
   * `status`: a value or setting changed (or the status was created). `deleted`: the status
   * is gone. `access`: who may see it changed (a role revoked); streams re-check visibility.
   */
  kind: 'status' | 'deleted' | 'access'
}

export type ChangeListener = (change: StatusChange) => void

/**
 * Where services announce committed writes and live streams hear about them.
 *
 * note: `publish` is called after the transaction commits and never throws: the write has
 * happened, so a delivery failure is the bus's to log, not the writer's to report. Listeners
 * must return at once (they schedule work; they never block the publisher).
 */
export interface EventBus {
  publish(change: StatusChange): Promise<void>
  /**
   * Optional: announces the change inside the write's own transaction, so that it is
   * delivered if and only if the write commits, even when this process dies right after
   * the commit (PostgreSQL's NOTIFY is transactional). A bus that has it is not called
   * with `publish` for the change after the commit. Unlike `publish` it throws like any
   * statement, and fails the write with it.
   */
  publishWithin?(tx: Transaction<DB>, change: StatusChange): Promise<void>
  /** Calls `listener` for every change of the status until the returned function is called. */
  subscribe(statusId: string, listener: ChangeListener): () => void
  /**
   * Optional: registers a callback for after a gap in delivery (a LISTEN connection that
   * dropped and came back). Changes in the gap were lost, so live streams re-read their status.
   */
  onResync?(listener: () => void): void
  /** Stops delivering and releases resources (a LISTEN connection, say). */
  close(): Promise<void>
}

/**
 * Runs a write and announces the change it made (`changeOf` its result): within its
 * transaction when the bus can, otherwise right after the commit (never before: streams
 * would read the old row).
 */
export async function announcedWrite<T>(
  deps: { db: Kysely<DB>; writer?: Writer; events?: EventBus | undefined },
  work: (tx: Transaction<DB>) => Promise<T>,
  changeOf: (result: T) => StatusChange,
): Promise<T> {
  const { events } = deps
  const within = events?.publishWithin?.bind(events)
  const result = await writerOf(deps).run(async (tx) => {
    const done = await work(tx)
    if (within) await within(tx, changeOf(done))
    return done
  })
  if (!within) await announce(events, changeOf(result))
  return result
}

/** Hands a committed change to the bus, if there is one; never fails the caller. */
async function announce(events: EventBus | undefined, change: StatusChange): Promise<void> {
  if (!events) return
  try {
    await events.publish(change)
  } catch {
    // note: the EventBus contract says publish never throws; this guards a faulty one
  }
}

/**
 * The bus of a single process (SQLite, or one instance): changes go straight to the
 * listeners of the same process. A PostgreSQL bus publishes with NOTIFY instead and feeds what
 * its LISTEN connection hears into one of these, so every instance delivers every change.
 */
export class InProcessEventBus implements EventBus {
  readonly #listeners = new Map<string, Set<ChangeListener>>()
  #closed = false
  /** Called when a listener throws; the other listeners still get the change. */
  readonly #onListenerError: (err: unknown) => void

  constructor(options: { onListenerError?: (err: unknown) => void } = {}) {
    this.#onListenerError = options.onListenerError ?? (() => {})
  }

  async publish(change: StatusChange): Promise<void> {
    this.dispatch(change)
  }

  /** Delivers a change to this process's listeners (what a NOTIFY handler calls). */
  dispatch(change: StatusChange): void {
    if (this.#closed) return
    const listeners = this.#listeners.get(change.statusId)
    if (!listeners) return
    // a copy: a listener may unsubscribe (itself or another) while we iterate
    for (const listener of [...listeners]) {
      try {
        listener(change)
      } catch (err) {
        this.#onListenerError(err)
      }
    }
  }

  subscribe(statusId: string, listener: ChangeListener): () => void {
    let set = this.#listeners.get(statusId)
    if (!set) {
      set = new Set()
      this.#listeners.set(statusId, set)
    }
    set.add(listener)
    return () => {
      const current = this.#listeners.get(statusId)
      if (!current) return
      current.delete(listener)
      // no empty sets left behind: a status nobody watches costs nothing
      if (current.size === 0) this.#listeners.delete(statusId)
    }
  }

  /** Listeners of one status (tests use it to prove streams clean up after themselves). */
  listenerCount(statusId: string): number {
    return this.#listeners.get(statusId)?.size ?? 0
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#listeners.clear()
  }
}
