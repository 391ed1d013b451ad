import type { FastifyBaseLogger } from 'fastify'
import type { OutboxTail } from '../../db/engine.ts'
import { LIVE_CHANGE_TYPES, STATUS_CHANGED, STATUS_STALE } from '../outbox/outbox.service.ts'
import type { StatusFeeds } from './status-feeds.ts'

// The outbox relay (docs/postgres.md#live-updates-across-instances). With several instances,
// a change reaches the other instances' streams by NOTIFY, sent right after the write's commit:
// fast, but a notification is not stored anywhere, so one that never arrives (dropped on the
// way, a writer that died before sending it, a connection pooler that does not pass LISTEN) would
// leave a stream behind until the status changes again. Every value write on a status
// with a notification rule and every staleness also records a status event in the outbox,
// in its own transaction (any other change, a value write without a rule included, a
// `live.*` event: announcedWrite), and the
// outbox is stored: each instance reads what was committed since its last look, in commit
// order (Database.outboxTail), and hands every status it has streams on to its feed. A feed
// re-reads a status only when the stored version is newer than what it delivered, and
// clients get a version once (their event id), so a change heard by NOTIFY and read again
// here is sent once, and in order.

/** How often each instance reads the outbox for changes it may not have heard of. */
export const LIVE_RELAY_INTERVAL_MS = 1_000

/**
 * Most statuses one read hands on. A read asks only for the statuses this instance has
 * streams on, so however many other statuses change, only more than this many of its own
 * changing since the last read (after a long outage of the database, say) has every stream
 * re-read its status instead, which covers them all.
 */
export const LIVE_RELAY_BATCH = 500

/** The events that change what a stream shows: status events, and the other changes. */
const LIVE_TYPES = [STATUS_CHANGED, STATUS_STALE, ...LIVE_CHANGE_TYPES]
/** Who may see the status changed: streams check again even at the same version. */
const ACCESS: (typeof LIVE_CHANGE_TYPES)[number] = 'live.access'

export interface LiveRelayOptions {
  tail: OutboxTail
  feeds: StatusFeeds
  log: Pick<FastifyBaseLogger, 'info' | 'warn'>
  intervalMs?: number
  batch?: number
}

export class LiveRelay {
  readonly #options: LiveRelayOptions
  /** Where the next read starts (an opaque position); undefined until one is taken. */
  #cursor: string | undefined
  /** Bumped by restart(): a read begun before it does not set the position. */
  #generation = 0
  #running: Promise<void> | undefined
  #timer: NodeJS.Timeout | undefined
  #failing = false
  #closed = false

  constructor(options: LiveRelayOptions) {
    this.#options = options
  }

  /** Takes its starting position now, then reads every `intervalMs`. */
  start(): void {
    this.#timer = setInterval(
      () => void this.#pass(),
      this.#options.intervalMs ?? LIVE_RELAY_INTERVAL_MS,
    )
    // note: never keeps the process alive on its own
    this.#timer.unref()
    void this.#pass()
  }

  /** One read now, after the one under way if any (tests). Rejects as the read does. */
  async runOnce(): Promise<void> {
    while (this.#running) await this.#running.catch(() => {})
    return this.#track(this.#run())
  }

  /**
   * Takes a new position, then has every stream read its status again: after the LISTEN
   * connection came back from a loss (the bus's resync), which may be on another server or
   * the same one restarted, whose transaction ids can be below the position held. The
   * position comes first, so that what commits after the streams' reads is read from it.
   * Until one is taken (the database is down) the relay keeps trying at every interval.
   */
  restart(): void {
    if (this.#closed) return
    this.#cursor = undefined
    this.#generation += 1
    // a read under way (begun with the old position) ends first; its result is dropped
    if (this.#running) void this.#running.catch(() => {}).then(() => this.#pass())
    else this.#pass()
  }

  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#timer)
    await this.#running?.catch(() => {})
  }

  #pass(): void {
    if (this.#closed || this.#running) return
    void this.#track(this.#run()).then(
      () => {
        if (!this.#failing) return
        this.#failing = false
        this.#options.log.info('live updates: reading the outbox again')
      },
      (err: unknown) => {
        // once per failure streak: the database is likely down, and says so elsewhere
        if (this.#failing) return
        this.#failing = true
        this.#options.log.warn({ err }, 'live updates: could not read the outbox; retrying')
      },
    )
  }

  #track(run: Promise<void>): Promise<void> {
    const tracked = run.finally(() => {
      if (this.#running === tracked) this.#running = undefined
    })
    this.#running = tracked
    return tracked
  }

  async #run(): Promise<void> {
    const { tail, feeds, log, batch = LIVE_RELAY_BATCH } = this.#options
    const generation = this.#generation
    if (this.#cursor === undefined) {
      const position = await tail.start()
      if (this.#closed || generation !== this.#generation) return
      this.#cursor = position
      // what committed before the position, the streams read now (none at the first start:
      // streams attached later read their status for themselves)
      feeds.refreshAll()
      return
    }
    const watched = feeds.statusIds()
    const page = await tail.read(this.#cursor, LIVE_TYPES, batch, watched)
    if (this.#closed || generation !== this.#generation) return
    // a status whose first stream came while the read was on its way was not asked for: its
    // feed reads it now, which covers what committed before the next position
    const current = feeds.statusIds()
    if (current.length > 0) {
      const asked = new Set(watched)
      for (const statusId of current) if (!asked.has(statusId)) feeds.refresh(statusId)
    }
    if (page.restarted)
      log.info(
        'live updates: the outbox position was taken on another server (a failover or a restart of PostgreSQL); every stream reads its status again',
      )
    if (!page.complete) feeds.refreshAll()
    else
      for (const { statusId, version, types } of page.changed)
        feeds.relayed(statusId, version, types.includes(ACCESS))
    this.#cursor = page.next
  }
}
