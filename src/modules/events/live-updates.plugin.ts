import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { DEFAULT_CLIENT_LIMITS, StreamQuota } from '../../lib/client-limits.ts'
import { RenderCache } from '../../lib/render-cache.ts'
import { DEFAULT_SSE_OPTIONS, type SseOptions } from '../../lib/sse.ts'
import { KEY_REVOCATION_TOPIC } from '../keys/key-revocations.ts'
import { authenticateHash } from '../keys/keys.service.ts'
import { STATUS_CHANGES, type StatusEventBus } from '../statuses/status-events.ts'
import { authenticateSession } from '../users/sessions.service.ts'
import { LIVE_RELAY_INTERVAL_MS, LiveRelay } from './live-relay.ts'
import { StatusFeeds } from './status-feeds.ts'
import { StreamCredentials, streamCheckIntervalMs } from './stream-credentials.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where committed writes are announced for live updates (every instance's). */
    statusEvents: StatusEventBus
    /** Server-Sent Events tuning (heartbeat, per-client buffer bound). */
    sseOptions: SseOptions
    /** The live streams of statuses, fed by the bus. */
    feeds: StatusFeeds
    /** The public views as rendered, until their status changes. */
    renderedViews: RenderCache
    /** The credentials open event streams were opened with, checked while they stay open. */
    streamCredentials: StreamCredentials
    /**
     * The outbox relay of live updates, where several instances share the database
     * (PostgreSQL); absent on SQLite.
     */
    liveRelay?: LiveRelay
    /**
     * The open live streams, per client and in all; `statusd serve` sets their server-wide
     * `capacity` once it listens (docs/operations.md#server-wide-stream-capacity).
     */
    streamQuota: StreamQuota
  }
}

/** Most bytes of rendered public views kept (docs/sharing.md#caching-of-public-views). */
export const RENDER_CACHE_BYTES = 4 * 1024 * 1024
/**
 * Longest a rendered public view is served without a fresh read: what changes a view without
 * a change to its status (the owner's plan, a name in its people, history past its
 * retention) shows within this.
 */
export const RENDER_CACHE_MAX_AGE_MS = 1_000

/**
 * At shutdown, each event stream's client is told to reconnect within this (a random delay
 * per stream): at once, but 10 000 clients over a second rather than in one burst
 * (docs/operations.md#shutdown).
 */
export const SHUTDOWN_RECONNECT_SPREAD_MS = 1_000

export interface LiveUpdatesOptions {
  /**
   * Where committed writes are announced; the app owns it and closes it. Default: the
   * database's own (`Database.openEventBus`), so every instance on one database hears every
   * change.
   */
  events?: StatusEventBus
  /** Server-Sent Events tuning (heartbeat, per-client buffer bound). */
  sse?: Partial<SseOptions>
  /** Open event streams per user or client address (STREAMS_PER_CLIENT; default 64). */
  streamsPerClient?: number
  /**
   * How often this instance reads the outbox for changes other instances committed
   * (LIVE_RELAY_INTERVAL_MS; PostgreSQL only: docs/postgres.md#live-updates-across-instances).
   */
  liveRelayIntervalMs?: number
}

/**
 * Live updates (docs/api.md#live-updates): the bus of committed changes, the status feeds
 * the event streams read, the cache of rendered public views it keeps fresh, the relay from
 * the outbox, the stream quota, and the credentials of open streams, checked while they stay
 * open. At shutdown every stream ends, its client told when to reconnect.
 */
export const liveUpdates = fp(
  async (app: FastifyInstance, options: LiveUpdatesOptions) => {
    const { database, plans, clock, keyCache, revocations } = app
    const events: StatusEventBus =
      options.events ??
      (await database.openEventBus({
        ...STATUS_CHANGES,
        log: app.log,
        onListenerError: (err) => app.log.error({ err }, 'a live-update listener failed'),
      }))
    const feeds = new StatusFeeds({ db: database.db, plans, events, log: app.log, clock })
    // the public views as rendered, until their status changes (docs/sharing.md#caching-of-public-views):
    // told by the bus of every instance's changes, by this instance's writes at once
    // (ServiceDeps.committed), and emptied after a gap in what the bus delivered
    const rendered = new RenderCache({
      maxBytes: RENDER_CACHE_BYTES,
      maxAgeMs: RENDER_CACHE_MAX_AGE_MS,
      clock,
      watch: (statusId) => events.subscribe(statusId, () => rendered.invalidate(statusId)),
    })
    // with several instances, what every instance committed is also read back from the outbox,
    // so a change whose NOTIFY never came still reaches this instance's streams
    // (docs/postgres.md#live-updates-across-instances)
    const relay =
      database.outboxTail &&
      new LiveRelay({
        tail: database.outboxTail,
        feeds,
        log: app.log,
        intervalMs: options.liveRelayIntervalMs ?? LIVE_RELAY_INTERVAL_MS,
      })
    if (relay) {
      app.decorate('liveRelay', relay)
      app.addHook('onReady', async () => relay.start())
      app.addHook('preClose', () => relay.close())
    }
    // after a gap in what the bus delivered, every stream reads its status again; with a relay,
    // once it has taken a new position (the gap may have been a failover: LiveRelay.restart)
    events.onResync?.(() => {
      rendered.clear()
      if (relay) relay.restart()
      else feeds.refreshAll()
    })
    const streamCredentials = new StreamCredentials({
      // straight in the database: a key revoked or a session ended where this instance cannot
      // hear of it ends its streams within AUTH_CACHE_SECONDS (streamCheckIntervalMs)
      check: async ({ kind, hash }) =>
        kind === 'key'
          ? ((await authenticateHash(database.db, hash))?.user ?? null)
          : ((await authenticateSession(database.db, hash, clock))?.user ?? null),
      intervalMs: streamCheckIntervalMs(keyCache.ttlMs),
      onError: (err) =>
        app.log.warn({ err }, 'live updates: could not check the credentials of open streams'),
    })
    // a key revoked anywhere ends its streams at once; after a gap in delivery every open key
    // is checked
    revocations.subscribe(KEY_REVOCATION_TOPIC, (change) => {
      if ('keyId' in change) streamCredentials.endKey(change.keyId)
      else if ('userId' in change) void streamCredentials.checkAll()
      else streamCredentials.endSessions(change.sessionIds)
    })
    revocations.onResync?.(() => void streamCredentials.checkAll())
    // note: open event streams would keep close() waiting for ever; end them first. Each client
    // is told to reconnect within SHUTDOWN_RECONNECT_SPREAD_MS (the server no longer accepts
    // connections by now: drainOnClose), spread so they do not all arrive at the same moment
    app.addHook('preClose', async () => {
      streamCredentials.close()
      feeds.closeAll(() => Math.floor(Math.random() * SHUTDOWN_RECONNECT_SPREAD_MS))
    })
    app.addHook('onClose', () => events.close())

    app.decorate('statusEvents', events)
    app.decorate('sseOptions', { ...DEFAULT_SSE_OPTIONS, ...options.sse })
    app.decorate('feeds', feeds)
    app.decorate('renderedViews', rendered)
    app.decorate('streamCredentials', streamCredentials)
    // one count for both stream routes: a user's keyed streams, an address's anonymous ones
    app.decorate(
      'streamQuota',
      new StreamQuota(options.streamsPerClient ?? DEFAULT_CLIENT_LIMITS.streamsPerClient),
    )
  },
  { name: 'live-updates', dependencies: ['core', 'keys'] },
)
