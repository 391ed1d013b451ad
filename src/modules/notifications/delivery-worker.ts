import { performance } from 'node:perf_hooks'
import type { Kysely } from 'kysely'
import type { DB, Db } from '../../db/database.ts'
import { type Writer, writerOf } from '../../db/writer.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import type { Mailer } from '../../lib/mailer.ts'
import {
  claimPendingEvents,
  hasPendingEvents,
  markOutboxEventsFannedOut,
  type OutboxEventRow,
  pruneOutboxEvents,
  recordOutboxEvent,
} from '../outbox/outbox.service.ts'
import { viewersAmong } from '../statuses/sharing.service.ts'
import { userById } from '../users/users.service.ts'
import { type ChannelTypes, channelTypeOf } from './channel-registry.ts'
import {
  DeliveryError,
  type NotificationEvent,
  type NotifiedStatus,
  type SendContext,
} from './channel-types.ts'
import { DELIVERY_LOG_LENGTH } from './channels.service.ts'
import {
  anyDueDelivery,
  channelById,
  claimDueDeliveries,
  clearChannelFailing,
  type DeliveryWork,
  deleteSettledDeliveries,
  disableFailingChannel,
  insertAttempt,
  insertDeliveries,
  loadDeliveries,
  markChannelFailing,
  rulesOfStatus,
  settleDelivery,
  trimAttempts,
  usableChannelsOf,
} from './deliveries.repository.ts'
import { settingsUrl } from './notification-message.ts'
import { parseChannelIds, parseCondition, ruleMatches } from './rule-matching.ts'

// The delivery worker (docs/notifications.md#delivery). Two steps, each safe to run on several
// instances at once:
// 1. fan-out: recorded events (the outbox) become one delivery per channel to tell, in one
//    transaction per batch with the events marked done; deliveries are unique per event and
//    channel, so a batch run twice (a crash before the commit) makes nothing twice.
// 2. delivery: due deliveries are claimed under a lease in a short transaction (on PostgreSQL
//    `for update skip locked`, so each instance claims different ones), sent with no
//    transaction open (writers never wait on a receiver), and settled: delivered, or retried
//    with exponential backoff and full jitter until 24 h have passed, then failed.
// Delivery is at least once: a crash between a receiver's answer and the settle sends again,
// with the same event id, which receivers de-duplicate by.

/** The retry schedule (docs/notifications.md#retry-schedule). */
export const RETRY = {
  /** The first retry waits up to this long; each next one twice as long … */
  baseMs: 10_000,
  /** … up to this. */
  maxMs: 60 * 60 * 1000,
  /** A retry never comes sooner than this after the failure. */
  minMs: 1_000,
  /** A delivery is retried for this long after it was made, then given up. */
  windowMs: 24 * 60 * 60 * 1000,
} as const

/** A channel whose deliveries failed without a success for this long is disabled. */
export const DISABLE_AFTER_MS = 24 * 60 * 60 * 1000
/** Settled deliveries and fanned-out events are kept this long (the delivery log: 100 per channel). */
export const RETENTION_MS = 7 * 24 * 60 * 60 * 1000
/** Sends in flight per instance at most. */
export const DEFAULT_CONCURRENCY = 32

/** The event types this worker delivers; other outbox events are not its business. */
export const NOTIFICATION_EVENT_TYPES = [
  'status.changed',
  'status.stale',
  'channel.test',
  'channel.disabled',
] as const

/**
 * How long to wait before retry number `attempt` (1: after the first failure): full jitter,
 * a random time up to `baseMs · 2^(attempt-1)` capped at `maxMs`, never less than `minMs`.
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(RETRY.maxMs, RETRY.baseMs * 2 ** Math.max(0, attempt - 1))
  return Math.max(RETRY.minMs, Math.floor(random() * ceiling))
}

interface WorkerLog {
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface DeliveryWorkerOptions {
  db: Kysely<DB>
  writer?: Writer
  /** Where due times are judged (tests move it by hand). */
  clock?: Clock
  /** The channel types offered (channel-registry.ts): how each channel sends. */
  types: ChannelTypes
  /** The service's public origin, for links in messages. */
  publicUrl: () => string
  log: WorkerLog
  /** Tells the owner of a channel the service disabled, when their address is verified. */
  mailer?: Mailer | null
  /** Sends in flight at most (default DEFAULT_CONCURRENCY). */
  concurrency?: number
  /** How often the worker looks for work when nothing woke it (default 1 s). */
  pollMs?: number
  /** Events fanned out per transaction (default 50). */
  fanOutBatch?: number
  /** How long a claimed delivery is held before another instance may take it (default 60 s). */
  leaseMs?: number
  /** The jitter's source (tests pin it). */
  random?: () => number
}

/** What one `runOnce()` did. */
export interface PassSummary {
  fannedOut: number
  attempted: number
}

/** The event as stored by whoever recorded it (statuses: `{status, at}`; channels: `{message, at}`). */
interface StoredPayload {
  status?: NotifiedStatus
  at?: string
  message?: string
}

const parsePayload = (json: string | null): StoredPayload => {
  try {
    const value: unknown = json === null ? {} : JSON.parse(json)
    return value && typeof value === 'object' ? (value as StoredPayload) : {}
  } catch {
    return {}
  }
}

export class DeliveryWorker {
  readonly #db: Kysely<DB>
  readonly #writer: Writer
  readonly #clock: Clock
  readonly #types: ChannelTypes
  readonly #publicUrl: () => string
  readonly #log: WorkerLog
  readonly #mailer: Mailer | null
  readonly #concurrency: number
  readonly #pollMs: number
  readonly #fanOutBatch: number
  readonly #leaseMs: number
  readonly #random: () => number
  readonly #inFlight = new Set<Promise<void>>()
  #running = false
  #loop: Promise<void> | undefined
  #wake: (() => void) | undefined
  /** Set by kick(): work came while a pass ran, so the next wait is skipped. */
  #kicked = false
  #nextPruneAt: number
  #mails = new Set<Promise<void>>()

  constructor(options: DeliveryWorkerOptions) {
    this.#db = options.db
    this.#writer = writerOf({ db: options.db, ...(options.writer && { writer: options.writer }) })
    this.#clock = options.clock ?? systemClock
    this.#types = options.types
    this.#publicUrl = options.publicUrl
    this.#log = options.log
    this.#mailer = options.mailer ?? null
    this.#concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
    this.#pollMs = options.pollMs ?? 1000
    this.#fanOutBatch = options.fanOutBatch ?? 50
    this.#leaseMs = options.leaseMs ?? 60_000
    this.#random = options.random ?? Math.random
    // the first pruning a minute after the start, then hourly
    this.#nextPruneAt = this.#clock.now() + 60_000
  }

  #iso(offsetMs = 0): string {
    return new Date(this.#clock.now() + offsetMs).toISOString()
  }

  /** Starts working in the background until close(). */
  start(): void {
    if (this.#running) return
    this.#running = true
    this.#loop = this.#run()
  }

  /** Looks for work now rather than at the next poll (an event was just recorded). */
  kick(): void {
    this.#kicked = true
    this.#wake?.()
  }

  /** Stops looking for work and waits for the sends in flight (each bounded by its timeout). */
  async close(): Promise<void> {
    this.#running = false
    this.#wake?.()
    await this.#loop
    await Promise.allSettled([...this.#inFlight])
    await Promise.allSettled([...this.#mails])
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let busy = false
      this.#kicked = false
      try {
        busy = (await this.fanOut()) > 0
        if (this.#inFlight.size < this.#concurrency) busy = (await this.#fill()) > 0 || busy
        if (this.#clock.now() >= this.#nextPruneAt) {
          this.#nextPruneAt = this.#clock.now() + 60 * 60 * 1000
          await this.prune()
        }
      } catch (err) {
        this.#log.warn({ err }, 'notifications: a pass of the delivery worker failed')
        busy = false
      }
      if (!this.#running) break
      // full: wait for a slot; idle: for the next poll or a kick; busy with room: go on
      if (!busy || this.#inFlight.size >= this.#concurrency) await this.#idle()
    }
  }

  #idle(): Promise<void> {
    if (this.#kicked) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.#wake = undefined
        resolve()
      }
      const timer = setTimeout(done, this.#pollMs)
      this.#wake = done
    })
  }

  /**
   * One deterministic pass, for tests and tools: fans out every pending event, then attempts
   * every delivery due now (at most `concurrency` at once) and waits for them to settle.
   * Deliveries retried by this pass are due later, so it ends.
   */
  async runOnce(): Promise<PassSummary> {
    let fannedOut = 0
    for (let n = await this.fanOut(); n > 0; n = await this.fanOut()) fannedOut += n
    let attempted = 0
    for (;;) {
      const claimed = this.#inFlight.size < this.#concurrency ? await this.#fill() : 0
      attempted += claimed
      if (claimed === 0) {
        if (this.#inFlight.size === 0) break
        await Promise.race(this.#inFlight)
      }
    }
    return { fannedOut, attempted }
  }

  /** Fans out one batch of pending events; returns how many events it took. */
  async fanOut(): Promise<number> {
    // note: looked for with a plain read first: an idle worker takes no write lock
    if (!(await hasPendingEvents(this.#db, NOTIFICATION_EVENT_TYPES))) return 0
    return this.#writer.run(async (tx) => {
      const events = await claimPendingEvents(tx, NOTIFICATION_EVENT_TYPES, this.#fanOutBatch)
      if (events.length === 0) return 0
      const now = this.#iso()
      const rows = []
      for (const event of events)
        for (const channelId of await this.#recipients(tx, event))
          rows.push({
            id: newId(),
            event_id: event.id,
            channel_id: channelId,
            state: 'pending',
            attempts: 0,
            next_attempt_at: now,
            locked_until: null,
            created_at: now,
            delivered_at: null,
          })
      await insertDeliveries(tx, rows)
      await markOutboxEventsFannedOut(
        tx,
        events.map((e) => e.id),
        now,
      )
      return events.length
    })
  }

  /** The channels an event goes to (docs/notifications.md#rules). */
  async #recipients(tx: Db, event: OutboxEventRow): Promise<string[]> {
    switch (event.type) {
      case 'status.changed':
      case 'status.stale': {
        const status = parsePayload(event.payload).status
        if (!event.status_id || !status) return []
        const rules = (await rulesOfStatus(tx, event.status_id)).filter((rule) =>
          ruleMatches(parseCondition(rule.condition), event.type, status),
        )
        if (rules.length === 0) return []
        // only who may still see the status: a role revoked or a status made private since
        // the rule was set tells no one
        const viewers = await viewersAmong(
          tx,
          event.status_id,
          rules.map((rule) => rule.user_id),
        )
        const allowed = new Map(
          rules
            .filter((rule) => viewers.has(rule.user_id))
            .map((rule) => [rule.user_id, parseChannelIds(rule.channel_ids)]),
        )
        const channels = await usableChannelsOf(tx, [...allowed.keys()])
        return channels
          .filter((c) => {
            const only = allowed.get(c.user_id)
            return only === null || only?.has(c.id) === true
          })
          .map((c) => c.id)
      }
      case 'channel.test': {
        const channel = event.channel_id ? await channelById(tx, event.channel_id) : undefined
        return channel && channel.verified_at !== null ? [channel.id] : []
      }
      case 'channel.disabled': {
        if (!event.user_id) return []
        return (await usableChannelsOf(tx, [event.user_id]))
          .filter((c) => c.id !== event.channel_id)
          .map((c) => c.id)
      }
      default:
        return []
    }
  }

  /** Claims due deliveries for the free slots and starts sending them; returns how many. */
  async #fill(): Promise<number> {
    const room = this.#concurrency - this.#inFlight.size
    if (room <= 0) return 0
    const now = this.#iso()
    const lease = this.#iso(this.#leaseMs)
    if (!(await anyDueDelivery(this.#db, now))) return 0
    const ids = await this.#writer.run((tx) => claimDueDeliveries(tx, now, lease, room))
    if (ids.length === 0) return 0
    for (const work of await loadDeliveries(this.#db, ids)) {
      const sending: Promise<void> = this.#attempt(work)
        .catch((err) => this.#log.error({ err }, 'notifications: settling a delivery failed'))
        .finally(() => {
          this.#inFlight.delete(sending)
          // half the slots free again: time to claim more
          if (this.#inFlight.size <= this.#concurrency / 2) this.#wake?.()
        })
      this.#inFlight.add(sending)
    }
    return ids.length
  }

  /** Sends one delivery (no transaction open) and settles it. */
  async #attempt(work: DeliveryWork): Promise<void> {
    const { channel } = work
    const type = work.event_type ?? 'unknown'
    // a channel disabled since the fan-out gets nothing (but a test, which checks it works)
    if (channel.enabled !== 1 && type !== 'channel.test') {
      await this.#writer.run((tx) =>
        settleDelivery(tx, work.id, { state: 'failed', attempts: work.attempts }),
      )
      return
    }
    const payload = parsePayload(work.event_payload)
    const event: NotificationEvent = {
      type,
      id: work.event_id,
      at: payload.at ?? work.created_at,
      ...(payload.status && { status: payload.status }),
      ...(payload.message !== undefined && { message: payload.message }),
    }
    const context: SendContext = { publicUrl: this.#publicUrl() }
    const at = this.#iso()
    const started = performance.now()
    let statusCode: number | null = null
    let failure: DeliveryError | null = null
    try {
      const definition = channelTypeOf(this.#types, channel.type)
      if (!definition)
        throw new DeliveryError(`channel type ${channel.type} is not available`, false)
      statusCode =
        (await definition.send(channel, JSON.parse(channel.config), event, context)).statusCode ??
        null
    } catch (err) {
      failure =
        err instanceof DeliveryError
          ? err
          : new DeliveryError(err instanceof Error ? err.message : String(err), true)
      statusCode = failure.statusCode ?? null
    }
    const durationMs = Math.max(0, Math.round(performance.now() - started))
    const attempts = work.attempts + 1
    const disabled = await this.#writer.run(async (tx) => {
      await insertAttempt(tx, {
        id: newId(),
        delivery_id: work.id,
        channel_id: channel.id,
        event_id: work.event_id,
        event_type: type,
        at,
        status_code: statusCode,
        error: failure ? failure.message.slice(0, 500) : null,
        duration_ms: durationMs,
      })
      const now = this.#clock.now()
      const nowIso = new Date(now).toISOString()
      if (!failure) {
        await settleDelivery(tx, work.id, { state: 'delivered', at: nowIso, attempts })
        await clearChannelFailing(tx, channel.id)
        return false
      }
      const retryAt = now + retryDelayMs(attempts, this.#random)
      const giveUp = !failure.retryable || retryAt > Date.parse(work.created_at) + RETRY.windowMs
      await settleDelivery(
        tx,
        work.id,
        giveUp
          ? { state: 'failed', attempts }
          : { state: 'pending', attempts, nextAttemptAt: new Date(retryAt).toISOString() },
      )
      await markChannelFailing(tx, channel.id, nowIso)
      const reason = `Deliveries failed for 24 hours (last: ${failure.message.slice(0, 200)})`
      const disabledNow = await disableFailingChannel(
        tx,
        channel.id,
        new Date(now - DISABLE_AFTER_MS).toISOString(),
        reason,
        nowIso,
      )
      if (disabledNow)
        await recordOutboxEvent(tx, {
          type: 'channel.disabled',
          userId: channel.user_id,
          channelId: channel.id,
          payload: {
            message: `Your channel "${channel.name}" was disabled: ${reason}. Enable it again once it works.`,
            at: nowIso,
          },
          at: nowIso,
        })
      return disabledNow
    })
    if (disabled) {
      this.kick()
      this.#mailOwner(channel.user_id, channel.name, failure?.message ?? '')
    }
  }

  /** Tells the owner of a channel the service disabled by e-mail, in the background. */
  #mailOwner(userId: string, channelName: string, lastError: string): void {
    const mailer = this.#mailer
    if (!mailer) return
    const sending = (async () => {
      const user = await userById(this.#db, userId)
      if (!user?.email || user.email_verified_at === null) return
      await mailer.send({
        to: user.email,
        subject: `Notification channel "${channelName}" was disabled`,
        text: [
          `Hello ${user.name},`,
          '',
          `Deliveries to your notification channel "${channelName}" have failed for 24 hours, so it was disabled.`,
          `The last error: ${lastError}`,
          '',
          `Once it works again, turn it on in your notification settings: ${settingsUrl(this.#publicUrl())}`,
        ].join('\n'),
      })
    })()
      .catch((err) => this.#log.warn({ err }, 'notifications: mailing a disabled channel failed'))
      .finally(() => this.#mails.delete(sending))
    this.#mails.add(sending)
  }

  /**
   * Retention (docs/notifications.md#retention): each channel's attempts beyond its last 100,
   * and settled deliveries and fanned-out events older than 7 days.
   */
  async prune(): Promise<{ attempts: number; deliveries: number; events: number }> {
    const before = this.#iso(-RETENTION_MS)
    const attempts = await this.#writer.run((tx) => trimAttempts(tx, DELIVERY_LOG_LENGTH))
    const deliveries = await this.#writer.run((tx) => deleteSettledDeliveries(tx, before))
    const events = await this.#writer.run((tx) => pruneOutboxEvents(tx, before))
    return { attempts, deliveries, events }
  }
}
