import { performance } from 'node:perf_hooks'
import type { Insertable, Kysely, Transaction } from 'kysely'
import type { DB, DeliveriesTable } from '../../db/database.ts'
import { type Writer, writerOf } from '../../db/writer.ts'
import { translator } from '../../i18n/i18n.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import type { Mailer } from '../../lib/mailer.ts'
import {
  markOutboxEventsFannedOut,
  type OutboxEventRow,
  pruneOutboxEvents,
  readPendingEvents,
  recordOutboxEvent,
} from '../outbox/outbox.service.ts'
import { viewersAmong } from '../statuses/sharing.service.ts'
import { userById } from '../users/users.service.ts'
import { type ChannelTypes, channelTypeOf } from './channel-registry.ts'
import {
  configForSend,
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
  clearChannelsFailing,
  type DeliveryWork,
  deleteSettledDeliveries,
  disableFailingChannel,
  insertAttempts,
  insertDeliveries,
  loadDeliveries,
  markChannelFailing,
  markDelivered,
  type RuleChannelRow,
  releaseDeliveries,
  ruleChannelsOfStatuses,
  settleDelivery,
  trimAttempts,
  usableChannelsOf,
} from './deliveries.repository.ts'
import { settingsUrl } from './notification-message.ts'
import {
  parseChannelIds,
  parseCondition,
  type RuleCondition,
  type RuleOwner,
  ruleMatches,
} from './rule-matching.ts'

// The delivery worker (docs/notifications.md#delivery). Two steps, each safe to run on several
// instances at once:
// 1. fan-out: recorded events (the outbox) become one delivery per channel to tell. Who to
//    tell is read outside any write (rules, viewers, channels: once per status and pass); the
//    writes only insert, in bounded batches, the last marking the events done. Deliveries are
//    unique per event and channel, so a fan-out run twice (a crash before the last write, or
//    two instances reading the same events) makes nothing twice.
// 2. delivery: due deliveries are claimed under a lease, many per write (on PostgreSQL
//    `for update skip locked`, so each instance claims different ones), sent with no
//    transaction open (writers never wait on a receiver) from a queue by `concurrency` slots;
//    a slot is free again as soon as the receiver has answered, and the answers are recorded
//    in batches, many per write: delivered, or retried with exponential backoff and full
//    jitter until 24 h have passed, then failed.
// Delivery is at least once: a crash between a receiver's answer and the write recording it
// sends again once the lease has run out, with the same event id, which receivers
// de-duplicate by.

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
  /** Events fanned out per pass (default 200). */
  fanOutBatch?: number
  /** Deliveries claimed per write at most (default 4 × concurrency; see #claim). */
  claimBatch?: number
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
  /** Who the change was made for (a `status.changed` event; docs/notifications.md#rules). */
  by?: string | null
  message?: string
  /** The channel a `channel.test` or `channel.disabled` notice is about. */
  channelName?: string
}

const parsePayload = (json: string | null): StoredPayload => {
  try {
    const value: unknown = json === null ? {} : JSON.parse(json)
    return value && typeof value === 'object' ? (value as StoredPayload) : {}
  } catch {
    return {}
  }
}

/** A send's result, waiting to be recorded with others in one write (`#settle`). */
interface Outcome {
  work: DeliveryWork
  /** The channel was disabled since the fan-out: nothing was sent, the delivery is given up. */
  skipped: boolean
  /** When the attempt began (the delivery log's time). */
  at: string
  statusCode: number | null
  failure: DeliveryError | null
  durationMs: number
}

/** Outcomes recorded per write at most. */
const SETTLE_BATCH = 500
/** Deliveries inserted per write of a fan-out at most: a writer waits on no longer a unit. */
const FAN_OUT_ROWS_PER_WRITE = 1000

/** Who an event's status may tell, read once per status for a fan-out pass. */
interface StatusAudience {
  /** Per user with a rule and a usable channel: the rule and the channels it may use. */
  users: Map<string, { condition: RuleCondition | null; owner: RuleOwner; channelIds: string[] }>
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
  readonly #claimBatch: number
  readonly #pollMs: number
  readonly #fanOutBatch: number
  readonly #leaseMs: number
  readonly #random: () => number
  /** Claimed deliveries not sent yet, in claim order. */
  #queue: DeliveryWork[] = []
  /** Sends in flight (a slot each), until the receiver's answer is in. */
  readonly #sending = new Set<Promise<void>>()
  /** Answers in, not recorded yet: the next settle write takes them. */
  #outcomes: Outcome[] = []
  #settling: Promise<void> | undefined
  /** What every send of the current claim is told (the origin is read once per claim). */
  #context: SendContext = { publicUrl: '' }
  /** The last event's payload, parsed: a fan-out's deliveries mostly carry the same event. */
  #lastPayload: { id: string; payload: StoredPayload } | undefined
  /** The last claim took all it asked for: more may be due. */
  #moreDue = false
  #running = false
  #closing = false
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
    this.#claimBatch = Math.max(1, options.claimBatch ?? this.#concurrency * 4)
    this.#pollMs = options.pollMs ?? 1000
    this.#fanOutBatch = options.fanOutBatch ?? 200
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

  /**
   * Stops looking for work, waits for the sends in flight (each bounded by its timeout) and
   * records their outcomes; deliveries claimed but not sent are let go for the next instance.
   */
  async close(): Promise<void> {
    this.#running = false
    this.#closing = true
    this.#wake?.()
    await this.#loop
    await Promise.allSettled([...this.#sending])
    await this.#settled()
    const unsent = this.#queue.map((work) => work.id)
    this.#queue = []
    if (unsent.length > 0)
      await this.#writer
        .run((tx) => releaseDeliveries(tx, unsent))
        .catch((err) => this.#log.warn({ err }, 'notifications: letting deliveries go failed'))
    await Promise.allSettled([...this.#mails])
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let busy = false
      this.#kicked = false
      try {
        // a full batch: more events may wait
        busy = (await this.fanOut()) >= this.#fanOutBatch
        if (this.#queue.length < this.#concurrency) busy = (await this.#claim()) > 0 || busy
        this.#pump()
        if (this.#clock.now() >= this.#nextPruneAt) {
          this.#nextPruneAt = this.#clock.now() + 60 * 60 * 1000
          await this.prune()
        }
      } catch (err) {
        this.#log.warn({ err }, 'notifications: a pass of the delivery worker failed')
        busy = false
      }
      if (!this.#running) break
      // enough claimed: wait until the queue runs low; idle: for the next poll or a kick
      if (!busy || this.#queue.length >= this.#concurrency) await this.#idle()
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
      if (this.#queue.length === 0) attempted += await this.#claim()
      this.#pump()
      if (this.#sending.size === 0) {
        if (this.#queue.length === 0) break
        continue
      }
      await Promise.race(this.#sending)
    }
    await this.#settled()
    return { fannedOut, attempted }
  }

  /**
   * Fans out one batch of pending events; returns how many events it took. Who to tell is
   * read outside any write; only the inserts are writes, at most FAN_OUT_ROWS_PER_WRITE
   * deliveries each, so a writer never waits behind a large fan-out. The events are marked
   * done with the last insert: a crash before runs the fan-out again, and the deliveries
   * already made stay as they are (unique per event and channel).
   */
  async fanOut(): Promise<number> {
    const events = await readPendingEvents(this.#db, NOTIFICATION_EVENT_TYPES, this.#fanOutBatch)
    if (events.length === 0) return 0
    const now = this.#iso()
    // note: one read for the whole batch: the rules of every status it changed, with channels
    const audiences = await this.#audiencesOf(
      events.flatMap((e) =>
        e.status_id && (e.type === 'status.changed' || e.type === 'status.stale')
          ? [e.status_id]
          : [],
      ),
    )
    let rows: Insertable<DeliveriesTable>[] = []
    const flush = async (last: boolean) => {
      const part = rows
      rows = []
      await this.#writer.run(async (tx) => {
        await insertDeliveries(tx, part)
        if (last)
          await markOutboxEventsFannedOut(
            tx,
            events.map((e) => e.id),
            now,
          )
      })
    }
    for (const event of events)
      for (const channelId of await this.#recipients(event, audiences)) {
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
        if (rows.length >= FAN_OUT_ROWS_PER_WRITE) await flush(false)
      }
    await flush(true)
    return events.length
  }

  /**
   * Who each status's rules may tell (docs/notifications.md#rules): users with a rule and a
   * usable channel who may still see the status (a role revoked or a status made private
   * since the rule was set tells no one), each with the channels their rule allows. A
   * status with none is not in the map.
   */
  async #audiencesOf(statusIds: readonly string[]): Promise<Map<string, StatusAudience>> {
    const audiences = new Map<string, StatusAudience>()
    if (statusIds.length === 0) return audiences
    const byStatus = new Map<string, RuleChannelRow[]>()
    for (const row of await ruleChannelsOfStatuses(this.#db, statusIds)) {
      const rows = byStatus.get(row.status_id)
      if (rows) rows.push(row)
      else byStatus.set(row.status_id, [row])
    }
    for (const [statusId, rows] of byStatus) {
      const viewers = await viewersAmong(this.#db, statusId, [
        ...new Set(rows.map((r) => r.user_id)),
      ])
      const users: StatusAudience['users'] = new Map()
      const allowed = new Map<string, Set<string> | null>()
      for (const row of rows) {
        if (!viewers.has(row.user_id)) continue
        let user = users.get(row.user_id)
        if (!user) {
          user = {
            condition: parseCondition(row.condition),
            owner: { userId: row.user_id, byOthers: Number(row.by_others) === 1 },
            channelIds: [],
          }
          users.set(row.user_id, user)
          allowed.set(row.user_id, parseChannelIds(row.channel_ids))
        }
        const only = allowed.get(row.user_id)
        if (only === null || only?.has(row.channel_id) === true)
          user.channelIds.push(row.channel_id)
      }
      audiences.set(statusId, { users })
    }
    return audiences
  }

  /** The channels an event goes to (docs/notifications.md#rules), read with no write open. */
  async #recipients(
    event: OutboxEventRow,
    audiences: Map<string, StatusAudience>,
  ): Promise<string[]> {
    switch (event.type) {
      case 'status.changed':
      case 'status.stale': {
        const audience = event.status_id ? audiences.get(event.status_id) : undefined
        // note: most changes tell no one; their payload is not even parsed
        if (!audience) return []
        const { status, by } = parsePayload(event.payload)
        if (!status) return []
        const out: string[] = []
        for (const user of audience.users.values())
          if (ruleMatches(user.condition, event.type, status, { rule: user.owner, by: by ?? null }))
            out.push(...user.channelIds)
        return out
      }
      case 'channel.test': {
        const channel = event.channel_id ? await channelById(this.#db, event.channel_id) : undefined
        return channel && channel.verified_at !== null ? [channel.id] : []
      }
      case 'channel.disabled': {
        if (!event.user_id) return []
        return (await usableChannelsOf(this.#db, [event.user_id]))
          .filter((c) => c.id !== event.channel_id)
          .map((c) => c.id)
      }
      default:
        return []
    }
  }

  /**
   * Claims due deliveries into the queue, enough to keep every slot busy until the next
   * claim (one write for many deliveries); returns how many. The queue never holds more than
   * `claimBatch`, so what it holds is sent well within its lease.
   */
  async #claim(): Promise<number> {
    const room = this.#claimBatch - this.#queue.length
    if (room <= 0) return 0
    const now = this.#iso()
    const lease = this.#iso(this.#leaseMs)
    if (!(await anyDueDelivery(this.#db, now))) {
      this.#moreDue = false
      return 0
    }
    const ids = await this.#writer.run((tx) => claimDueDeliveries(tx, now, lease, room))
    this.#moreDue = ids.length === room
    if (ids.length === 0) return 0
    this.#context = { publicUrl: this.#publicUrl() }
    this.#queue.push(...(await loadDeliveries(this.#db, ids)))
    return ids.length
  }

  /** Starts sends from the queue while slots are free; asks for a claim when it runs low. */
  #pump(): void {
    if (this.#closing) return
    while (this.#sending.size < this.#concurrency && this.#queue.length > 0) {
      const work = this.#queue.shift() as DeliveryWork
      const sending: Promise<void> = this.#attempt(work)
        .then((outcome) => this.#record(outcome))
        .catch((err) => this.#log.error({ err }, 'notifications: a delivery attempt failed'))
        .finally(() => {
          this.#sending.delete(sending)
          this.#pump()
        })
      this.#sending.add(sending)
    }
    if (this.#queue.length < this.#concurrency && this.#moreDue) this.#wake?.()
  }

  #payloadOf(work: DeliveryWork): StoredPayload {
    if (this.#lastPayload?.id !== work.event_id)
      this.#lastPayload = { id: work.event_id, payload: parsePayload(work.event_payload) }
    return this.#lastPayload.payload
  }

  /** Sends one delivery (no transaction open); its outcome is recorded later, with others. */
  async #attempt(work: DeliveryWork): Promise<Outcome> {
    const { channel } = work
    const type = work.event_type ?? 'unknown'
    const at = this.#iso()
    // a channel disabled since the fan-out gets nothing (but a test, which checks it works)
    if (channel.enabled !== 1 && type !== 'channel.test')
      return { work, skipped: true, at, statusCode: null, failure: null, durationMs: 0 }
    const payload = this.#payloadOf(work)
    const event: NotificationEvent = {
      type,
      id: work.event_id,
      at: payload.at ?? work.created_at,
      ...(payload.status && { status: payload.status }),
      ...(payload.message !== undefined && { message: payload.message }),
      ...(typeof payload.channelName === 'string' && { channelName: payload.channelName }),
    }
    // written in the channel owner's language (docs/languages.md)
    const context = { ...this.#context, locale: work.locale }
    const started = performance.now()
    let statusCode: number | null = null
    let failure: DeliveryError | null = null
    try {
      const definition = channelTypeOf(this.#types, channel.type)
      if (!definition)
        throw new DeliveryError(`channel type ${channel.type} is not available`, false)
      statusCode =
        (await definition.send(channel, configForSend(definition, channel), event, context))
          .statusCode ?? null
    } catch (err) {
      failure =
        err instanceof DeliveryError
          ? err
          : new DeliveryError(err instanceof Error ? err.message : String(err), true)
      statusCode = failure.statusCode ?? null
    }
    const durationMs = Math.max(0, Math.round(performance.now() - started))
    return { work, skipped: false, at, statusCode, failure, durationMs }
  }

  /** Queues an outcome for the next settle write; starts one unless one runs. */
  #record(outcome: Outcome): void {
    this.#outcomes.push(outcome)
    this.#settling ??= this.#settleAll().finally(() => {
      this.#settling = undefined
    })
  }

  /** Resolves once every outcome recorded so far is written (or its write failed). */
  async #settled(): Promise<void> {
    while (this.#settling) await this.#settling
  }

  /**
   * Writes outcomes while any wait, up to SETTLE_BATCH per write: one write (one commit, on
   * SQLite one fsync shared with the writes beside it) for the many answers that came in
   * while the last was made durable. Until its outcome is written a delivery stays leased;
   * a crash before sends it again after the lease, with the same event id (at least once).
   */
  async #settleAll(): Promise<void> {
    // the answers of this turn of the event loop join the first write
    await new Promise<void>((resolve) => setImmediate(resolve))
    while (this.#outcomes.length > 0) {
      const batch = this.#outcomes.splice(0, SETTLE_BATCH)
      let disabled: Outcome[] = []
      try {
        disabled = await this.#writer.run((tx) => this.#settle(tx, batch))
      } catch (err) {
        this.#log.error({ err }, 'notifications: settling deliveries failed')
      }
      for (const { work, failure } of disabled) {
        this.kick()
        this.#mailOwner(work.channel.user_id, work.channel.name, failure?.message ?? '')
      }
    }
  }

  /** Records outcomes in `tx`: the log, the deliveries' states, the channels' streaks. */
  async #settle(tx: Transaction<DB>, batch: readonly Outcome[]): Promise<Outcome[]> {
    const now = this.#clock.now()
    const nowIso = new Date(now).toISOString()
    const sent = batch.filter((o) => !o.skipped)
    await insertAttempts(
      tx,
      sent.map((o) => ({
        id: newId(),
        delivery_id: o.work.id,
        channel_id: o.work.channel.id,
        event_id: o.work.event_id,
        event_type: o.work.event_type ?? 'unknown',
        at: o.at,
        status_code: o.statusCode,
        error: o.failure ? o.failure.message.slice(0, 500) : null,
        duration_ms: o.durationMs,
      })),
    )
    for (const o of batch)
      if (o.skipped)
        await settleDelivery(tx, o.work.id, { state: 'failed', attempts: o.work.attempts })
    // delivered, grouped by their new count of attempts (most often 1: one write for all)
    const delivered = new Map<number, string[]>()
    for (const o of sent)
      if (!o.failure) {
        const attempts = o.work.attempts + 1
        const ids = delivered.get(attempts) ?? []
        ids.push(o.work.id)
        delivered.set(attempts, ids)
      }
    for (const [attempts, ids] of delivered) await markDelivered(tx, ids, nowIso, attempts)
    // note: successes first: a channel that succeeded in this batch is not disabled by it
    await clearChannelsFailing(
      tx,
      sent.filter((o) => !o.failure).map((o) => o.work.channel.id),
    )
    const disabled: Outcome[] = []
    for (const o of sent) {
      const { work, failure } = o
      if (!failure) continue
      const { channel } = work
      const attempts = work.attempts + 1
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
      if (disabledNow) {
        await recordOutboxEvent(tx, {
          type: 'channel.disabled',
          userId: channel.user_id,
          channelId: channel.id,
          payload: {
            message: `Your channel "${channel.name}" was disabled: ${reason}. Enable it again once it works.`,
            channelName: channel.name,
            at: nowIso,
          },
          at: nowIso,
        })
        disabled.push(o)
      }
    }
    return disabled
  }

  /** Tells the owner of a channel the service disabled by e-mail, in the background. */
  #mailOwner(userId: string, channelName: string, lastError: string): void {
    const mailer = this.#mailer
    if (!mailer) return
    const sending = (async () => {
      const user = await userById(this.#db, userId)
      if (!user?.email || user.email_verified_at === null) return
      const t = translator(user.locale)
      await mailer.send({
        to: user.email,
        subject: t('mail.channelDisabled.subject', { name: channelName }),
        text: [
          t('mail.common.hello', { name: user.name }),
          '',
          t('mail.channelDisabled.failed', { name: channelName }),
          t('mail.channelDisabled.lastError', { error: lastError }),
          '',
          t('mail.channelDisabled.turnOn', { url: settingsUrl(this.#publicUrl()) }),
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
