import { randomUUID } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import type pg from 'pg'
import {
  type BusLog,
  type EventBus,
  InProcessEventBus,
  type Listener,
  type MessageFormat,
} from '../../lib/event-bus.ts'
import type { DB } from '../database.ts'

export interface PgEventBusOptions<M> extends MessageFormat<M> {
  /** The pool: `publish` runs its `pg_notify` there, like any other short statement. */
  db: Kysely<DB>
  /**
   * A new, unconnected client outside the pool for the LISTEN session
   * (`PostgresDatabase.dedicatedClient`). Called again for every reconnect.
   */
  openClient: () => pg.Client | Promise<pg.Client>
  log?: BusLog
  /** Called when a local listener throws; the other listeners still get the message. */
  onListenerError?: (err: unknown) => void
  /** First delay before a reconnect; it doubles per failed attempt, up to `maxRetryMs`. */
  retryMs?: number
  maxRetryMs?: number
  /**
   * How often the LISTEN connection is probed with `select 1` (0: never). A connection that
   * does not answer within `checkTimeoutMs` is dropped and reopened: a silently dead one
   * would otherwise deliver nothing without anyone noticing.
   */
  checkIntervalMs?: number
  checkTimeoutMs?: number
  /** Another kind of message than status changes, on its own channel (`statusd:<schema>:<kind>`). */
  channel?: string
  /**
   * The setting the LISTEN connection's URL comes from (`DATABASE_URL` or
   * `DATABASE_LISTEN_URL`), named by the warning when the round trip after LISTEN fails.
   */
  listenVia?: string
  /** How long the NOTIFY round trip after each LISTEN may take before the warning (ms). */
  probeTimeoutMs?: number
}

// The payload of the NOTIFY round trip after LISTEN: every instance on the channel hears it,
// and passes over it without a word.
const PROBE = /^\{"probe":"([0-9a-f-]{36})"\}$/

/**
 * The channel's name, in SQL, so that the publishing (pool) and the listening connection
 * compute it alike: `statusd:<schema>`, and `statusd:<schema>:<kind>` for a bus of another
 * kind of message (`EventBusOptions.channel`: key revocations). Scoped to the schema because
 * NOTIFY channels are per database: two installations in two schemas of one database (and
 * parallel test schemas) must not hear each other. note: channel names are identifiers (63
 * bytes at most; `pg_notify` rejects longer ones), so a long schema name is replaced by its
 * md5.
 */
function channelSql(kind: string | undefined): string {
  if (kind === undefined)
    return `(case
  when octet_length(coalesce(current_schema(), '')) <= 55
    then 'statusd:' || coalesce(current_schema(), '')
  else 'statusd:' || md5(current_schema())
end)`
  if (!/^[a-z]{1,10}$/.test(kind)) throw new Error(`not a channel kind: ${kind}`)
  return `(case
  when octet_length(coalesce(current_schema(), '')) <= ${54 - kind.length}
    then 'statusd:' || coalesce(current_schema(), '') || ':${kind}'
  else 'statusd:' || md5(current_schema()) || ':${kind}'
end)`
}

/**
 * The statement that sends messages on the channel, each as its JSON, in order, in one
 * transaction of its own. note: NOTIFY payloads are limited to 8000 bytes; messages are
 * kept small (a status change is a few dozen).
 *
 * note: `synchronous_commit` off for this transaction only: a transaction that notifies holds
 * a lock on the cluster's notification queue from its commit until the commit is flushed, so
 * notifying transactions commit one at a time, each waiting for its own WAL flush. A NOTIFY
 * inside every write's transaction capped the writes of the whole cluster at one flush each
 * (docs/decisions/0012-postgresql-write-in-one-statement.md). Here nothing waits for a
 * flush: the writes are durable in their own transactions, and a notification a crash loses
 * is a change the outbox delivers anyway.
 */
const notifyAll = (db: Kysely<DB>, channel: string, messages: readonly string[]) =>
  sql`select set_config('synchronous_commit', 'off', true), pg_notify(${sql.raw(channel)}, m)
    from unnest(${messages}::text[]) as m`.execute(db)

const NOOP_LOG: BusLog = { info() {}, warn() {}, error() {} }

/**
 * The event bus of several instances on one PostgreSQL database: every instance delivers
 * every change (docs/sharing.md#several-instances-postgresql-listennotify). A write's change
 * is published right after its commit: a NOTIFY through the pool, one statement for all the
 * changes published while the previous one was on its way; one dedicated connection per
 * instance LISTENs and hands every notification to this instance's listeners. A change whose
 * NOTIFY is lost (the instance died between its commit and the NOTIFY) reaches every
 * instance from the outbox (`relayedByOutbox`).
 *
 * note: delivery is **only** through NOTIFY, the publishing instance included (it hears its
 * own notifications): one path, no instance ids in the payload and nothing delivered twice.
 * The price is a round trip through the database before a local stream hears of a local
 * write. When a NOTIFY fails, its changes are delivered here directly, so at least this
 * instance's streams are told.
 *
 * When the LISTEN connection drops (PostgreSQL restarted, the backend was terminated, the
 * network went away) the bus reconnects with backoff and then calls the `onResync`
 * listeners: changes in the gap were lost, so every live stream re-reads its status.
 */
export class PgEventBus<M> implements EventBus<M> {
  readonly #db: Kysely<DB>
  readonly #openClient: () => pg.Client | Promise<pg.Client>
  readonly #log: BusLog
  readonly #local: InProcessEventBus<M>
  readonly #topicOf: (message: M) => string
  readonly #parse: (payload: string | undefined) => M | undefined
  readonly #resyncListeners = new Set<() => void>()
  readonly #retryMs: number
  readonly #maxRetryMs: number
  readonly #checkIntervalMs: number
  readonly #checkTimeoutMs: number
  readonly #channelSql: string
  readonly #listenVia: string
  readonly #probeTimeoutMs: number
  /** The round trips under way: their token → what to call when it comes back. */
  readonly #probes = new Map<string, () => void>()
  #client: pg.Client | undefined
  #channel: string | undefined
  #pid: number | undefined
  #connecting: Promise<void> | undefined
  #retryTimer: NodeJS.Timeout | undefined
  #checkTimer: NodeJS.Timeout | undefined
  #failures = 0
  #heardItself: boolean | undefined
  /** True once a change may have been missed (a lost connection, a failed attempt). */
  #gap = false
  #closed = false
  #connects = 0

  constructor(options: PgEventBusOptions<M>) {
    this.#db = options.db
    this.#openClient = options.openClient
    this.#log = options.log ?? NOOP_LOG
    this.#topicOf = options.topicOf
    this.#parse = options.parse
    this.#local = new InProcessEventBus({
      topicOf: options.topicOf,
      onListenerError: options.onListenerError,
    })
    this.#retryMs = options.retryMs ?? 250
    this.#maxRetryMs = options.maxRetryMs ?? 5_000
    this.#checkIntervalMs = options.checkIntervalMs ?? 30_000
    this.#checkTimeoutMs = options.checkTimeoutMs ?? 10_000
    this.#channelSql = channelSql(options.channel)
    this.#listenVia = options.listenVia ?? 'DATABASE_URL'
    this.#probeTimeoutMs = options.probeTimeoutMs ?? 5_000
  }

  /**
   * Opens the LISTEN connection. Resolves after the first attempt either way: a failed one
   * is logged and retried in the background (the instance serves meanwhile; its streams
   * catch up on the resync after the connection is up).
   */
  start(): Promise<void> {
    return this.#connect()
  }

  /** True while the LISTEN connection is up. */
  get listening(): boolean {
    return this.#client !== undefined
  }

  /** The server process id of the LISTEN connection while it is up (`pg_stat_activity.pid`). */
  get listenerPid(): number | undefined {
    return this.#pid
  }

  /** The NOTIFY channel, once the first connection has named it (`statusd:<schema>`). */
  get channel(): string | undefined {
    return this.#channel
  }

  /**
   * Whether the NOTIFY round trip after the last LISTEN came back: undefined until it did or
   * timed out (and when it could not be sent).
   */
  get heardItself(): boolean | undefined {
    return this.#heardItself
  }

  /** Successful connections so far (the first, then one per reconnect). */
  get connects(): number {
    return this.#connects
  }

  /** Writers record every change in the outbox too: a NOTIFY sent after a commit can be lost. */
  readonly relayedByOutbox = true

  /** Changes waiting for the next NOTIFY statement, each with who waits for it. */
  #queued: { message: M; sent: () => void }[] = []
  #sending = false

  /**
   * A NOTIFY of a committed change, through the pool; resolves once it was sent (or could not
   * be). Changes published while a NOTIFY is on its way go together in the next one.
   */
  publish(message: M): Promise<void> {
    if (this.#closed) return Promise.resolve()
    return new Promise((sent) => {
      this.#queued.push({ message, sent })
      if (this.#sending) return
      this.#sending = true
      // after the other callbacks of this turn of the event loop: the writes that completed
      // in it go in one NOTIFY
      setImmediate(() => void this.#sendQueued())
    })
  }

  async #sendQueued(): Promise<void> {
    while (this.#queued.length > 0) {
      const batch = this.#queued
      this.#queued = []
      try {
        await notifyAll(
          this.#db,
          this.#channelSql,
          batch.map((queued) => JSON.stringify(queued.message)),
        )
      } catch (err) {
        // the writes are committed: never fail them. Other instances get these changes from
        // the outbox; this one tells its own streams now.
        this.#log.warn(
          { err, topics: batch.map((queued) => this.#topicOf(queued.message)) },
          'live updates: NOTIFY failed; the change reaches this instance only',
        )
        for (const queued of batch) this.#local.dispatch(queued.message)
      }
      for (const queued of batch) queued.sent()
    }
    this.#sending = false
  }

  subscribe(topic: string, listener: Listener<M>): () => void {
    return this.#local.subscribe(topic, listener)
  }

  onResync(listener: () => void): void {
    this.#resyncListeners.add(listener)
  }

  /** Local listeners of one topic (tests). */
  listenerCount(topic: string): number {
    return this.#local.listenerCount(topic)
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#retryTimer)
    clearInterval(this.#checkTimer)
    await this.#local.close()
    // an attempt under way ends its own client when it sees the bus closed
    await this.#connecting
    const client = this.#client
    this.#client = undefined
    this.#pid = undefined
    if (client) await endClient(client)
  }

  #connect(): Promise<void> {
    this.#connecting ??= this.#attempt().finally(() => {
      this.#connecting = undefined
    })
    return this.#connecting
  }

  async #attempt(): Promise<void> {
    if (this.#closed) return
    let client: pg.Client | undefined
    try {
      client = await this.#openClient()
      const opened = client
      // note: registered before connecting: an 'error' event without a listener would crash
      // the process. Events of a client that is not (or no longer) the current one are ignored.
      opened.on('error', (err) => this.#lost(opened, err))
      opened.on('end', () => this.#lost(opened))
      opened.on('notification', (message) => this.#onNotification(message))
      await opened.connect()
      const { rows } = await opened.query<{ channel: string; pid: number }>(
        `select ${this.#channelSql} as channel, pg_backend_pid() as pid`,
      )
      const row = rows[0] as { channel: string; pid: number }
      await opened.query(`LISTEN ${opened.escapeIdentifier(row.channel)}`)
      if (this.#closed) {
        await endClient(opened)
        return
      }
      this.#client = opened
      this.#channel = row.channel
      this.#pid = row.pid
      this.#failures = 0
      this.#connects += 1
      this.#startChecks(opened)
      const resync = this.#gap
      this.#gap = false
      this.#log.info(
        { channel: row.channel, reconnect: resync },
        'live updates: listening for changes from every instance',
      )
      if (resync) this.#resync()
      void this.#probe(opened, row.channel)
    } catch (err) {
      if (client) void endClient(client)
      if (this.#closed) return
      this.#gap = true
      this.#failures += 1
      const delay = this.#nextDelay()
      this.#log.warn(
        { err, retryInMs: delay, failures: this.#failures },
        'live updates: could not open the LISTEN connection; retrying',
      )
      this.#retryLater(delay)
    }
  }

  /** The LISTEN connection is gone: deliveries stop until a new one is up, then resync. */
  #lost(client: pg.Client, err?: unknown): void {
    if (client !== this.#client) return
    this.#client = undefined
    this.#pid = undefined
    clearInterval(this.#checkTimer)
    void endClient(client)
    if (this.#closed) return
    this.#gap = true
    this.#log.warn({ err }, 'live updates: LISTEN connection lost; reconnecting')
    // the first retry is immediate: a terminated backend or a restarted server is
    // usually back already; backoff starts from the second attempt
    this.#retryLater(0)
  }

  #retryLater(delayMs: number): void {
    clearTimeout(this.#retryTimer)
    this.#retryTimer = setTimeout(() => void this.#connect(), delayMs)
    // note: a pending reconnect never keeps the process alive on its own
    this.#retryTimer.unref()
  }

  /** Exponential backoff with jitter, so instances do not all knock at once after a restart. */
  #nextDelay(): number {
    const base = Math.min(this.#maxRetryMs, this.#retryMs * 2 ** (this.#failures - 1))
    return Math.round(base / 2 + Math.random() * (base / 2))
  }

  #startChecks(client: pg.Client): void {
    clearInterval(this.#checkTimer)
    if (this.#checkIntervalMs <= 0) return
    this.#checkTimer = setInterval(() => void this.#check(client), this.#checkIntervalMs)
    this.#checkTimer.unref()
  }

  async #check(client: pg.Client): Promise<void> {
    if (client !== this.#client) return
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer')), this.#checkTimeoutMs)
    })
    try {
      await Promise.race([client.query('select 1'), timeout])
    } catch (err) {
      // note: a failed query on a broken socket also emits 'error'; #lost runs once per client
      this.#lost(client, err)
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * A NOTIFY through the pool, which the LISTEN connection must hear: proof that the two
   * reach the same database and schema, and that the LISTEN connection keeps its session.
   * Behind a transaction-pooling PgBouncer it does not (LISTEN stays on whichever server
   * connection ran it, and PgBouncer passes nothing on to a client between its
   * transactions), so the notifications never arrive; the warning says what to set
   * (docs/postgres.md#behind-pgbouncer). Deliveries go on as they are either way: the outbox
   * relay still brings every change, within its interval.
   */
  async #probe(client: pg.Client, channel: string): Promise<void> {
    this.#heardItself = undefined
    const token = randomUUID()
    let timer: NodeJS.Timeout | undefined
    const heard = new Promise<boolean>((resolve) => {
      this.#probes.set(token, () => resolve(true))
      timer = setTimeout(() => resolve(false), this.#probeTimeoutMs)
      // note: a pending probe never keeps the process alive on its own
      timer.unref()
    })
    try {
      await sql`select pg_notify(${sql.raw(this.#channelSql)}, ${JSON.stringify({ probe: token })})`.execute(
        this.#db,
      )
    } catch {
      // the pool cannot reach the database: that is logged where it matters, and a LISTEN
      // connection that could not be checked is no news
      clearTimeout(timer)
      this.#probes.delete(token)
      return
    }
    const ok = await heard
    clearTimeout(timer)
    this.#probes.delete(token)
    // a connection lost or a bus closed meanwhile explains the silence
    if (this.#closed || client !== this.#client) return
    this.#heardItself = ok
    if (ok) return
    const where =
      this.#listenVia === 'DATABASE_URL'
        ? 'DATABASE_URL does not keep a session, as behind a transaction-pooling PgBouncer. Live updates across instances need LISTEN: set DATABASE_LISTEN_URL to a direct connection to PostgreSQL'
        : 'DATABASE_LISTEN_URL must reach PostgreSQL directly (not through a pooler), with the same database and schema (search_path) as DATABASE_URL'
    this.#log.warn(
      { channel, listenVia: this.#listenVia, waitedMs: this.#probeTimeoutMs },
      `live updates: a NOTIFY sent through DATABASE_URL did not reach this instance's LISTEN connection (${this.#listenVia}) within ${this.#probeTimeoutMs} ms: ${where} (docs/postgres.md#behind-pgbouncer). Until then this instance hears of other instances' changes late: status changes through the outbox within LIVE_RELAY_INTERVAL_MS, revoked keys after AUTH_CACHE_SECONDS`,
    )
  }

  #onNotification(message: pg.Notification): void {
    const probe = PROBE.exec(message.payload ?? '')
    if (probe) {
      // this instance's own round trip, or another instance's (then nothing to do)
      this.#probes.get(probe[1] as string)?.()
      return
    }
    // note: no check against #channel: the connection listens on that one channel only, and a
    // notification can arrive in the same packet as LISTEN's answer, before #channel is set
    const change = this.#parse(message.payload)
    if (change === undefined) {
      this.#log.warn(
        { channel: message.channel, payload: message.payload?.slice(0, 200) },
        'live updates: ignored a notification that is not a change',
      )
      return
    }
    this.#local.dispatch(change)
  }

  #resync(): void {
    for (const listener of this.#resyncListeners) {
      try {
        listener()
      } catch (err) {
        this.#log.error({ err }, 'live updates: a resync listener failed')
      }
    }
  }
}

/** Ends a client without waiting for ever on a dead peer, and without throwing. */
async function endClient(client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    client.end().catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 2_000)
      timer.unref()
    }),
  ])
  clearTimeout(timer)
}
