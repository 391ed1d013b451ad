import { randomUUID } from 'node:crypto'
import cookie from '@fastify/cookie'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Database } from './db/engine.ts'
import { type ClientLimits, DEFAULT_CLIENT_LIMITS, StreamQuota } from './lib/client-limits.ts'
import { type Clock, systemClock } from './lib/clock.ts'
import { validationError } from './lib/errors.ts'
import { LazySchemas } from './lib/lazy-schemas.ts'
import type { Mailer } from './lib/mailer.ts'
import { listeningOrigin } from './lib/origin.ts'
import { OutboundClient, type OutboundOptions, parseNetworks } from './lib/outbound.ts'
import { KEY_LIKE } from './lib/redact.ts'
import { RenderCache } from './lib/render-cache.ts'
import { API_RESPONSE_HEADERS } from './lib/response-headers.ts'
import { DEFAULT_SSE_OPTIONS, type SseOptions } from './lib/sse.ts'
import {
  accountMailRoutes,
  emailVerificationRoutes,
} from './modules/accounts/account-mail.routes.ts'
import { AccountMail } from './modules/accounts/account-mail.service.ts'
import { authRoutes } from './modules/accounts/auth.routes.ts'
import { passkeyRoutes, passkeySignInRoutes } from './modules/accounts/passkeys.routes.ts'
import { profileRoutes } from './modules/accounts/profile.routes.ts'
import { BoardStreams } from './modules/boards/board-streams.ts'
import { boardRoutes, publicBoardRoutes } from './modules/boards/boards.routes.ts'
import {
  shareEventsRoutes,
  shareLinkEventsRoutes,
  statusEventsRoutes,
} from './modules/events/events.routes.ts'
import { LIVE_RELAY_INTERVAL_MS, LiveRelay } from './modules/events/live-relay.ts'
import { StatusFeeds } from './modules/events/status-feeds.ts'
import { StreamCredentials, streamCheckIntervalMs } from './modules/events/stream-credentials.ts'
import { healthRoutes } from './modules/health/health.routes.ts'
import { WriteHealth } from './modules/health/write-health.ts'
import { KeyCache } from './modules/keys/key-cache.ts'
import {
  KEY_REVOCATION_TOPIC,
  KEY_REVOCATIONS,
  type KeyRevocationBus,
} from './modules/keys/key-revocations.ts'
import { apiKeyRoutes } from './modules/keys/keys.routes.ts'
import { authenticateHash } from './modules/keys/keys.service.ts'
import { makeChannelTypes } from './modules/notifications/channel-registry.ts'
import { channelRoutes } from './modules/notifications/channels.routes.ts'
import type { ChannelDeps } from './modules/notifications/channels.service.ts'
import {
  DeliveryWorker,
  type DeliveryWorkerOptions,
} from './modules/notifications/delivery-worker.ts'
import {
  channelConfirmationState,
  confirmEmailChannel,
} from './modules/notifications/email-channel.ts'
import { ruleRoutes } from './modules/notifications/rules.routes.ts'
import { VapidKeys, vapidSubject } from './modules/notifications/vapid-keys.ts'
import { webpushRoutes } from './modules/notifications/webpush.routes.ts'
import type { Plans } from './modules/plans/plans.ts'
import type { ServiceDeps } from './modules/service-deps.ts'
import { historyRoutes } from './modules/statuses/history.routes.ts'
import { HistorySweeper } from './modules/statuses/history-sweep.ts'
import { invitationPreviewRoutes, invitationRoutes } from './modules/statuses/invitations.routes.ts'
import { searchRoutes } from './modules/statuses/search.routes.ts'
import { shareRoutes } from './modules/statuses/share.routes.ts'
import { shareLinkRoutes, shareLinkViewRoutes } from './modules/statuses/share-links.routes.ts'
import { sharingRoutes } from './modules/statuses/sharing.routes.ts'
import { reachableStatuses } from './modules/statuses/sharing.service.ts'
import { StaleDetector } from './modules/statuses/stale-detector.ts'
import { STALE_CHECK_INTERVAL_MS } from './modules/statuses/staleness.ts'
import { STATUS_CHANGES, type StatusEventBus } from './modules/statuses/status-events.ts'
import { statusRoutes } from './modules/statuses/statuses.routes.ts'
import type { AccountDeps } from './modules/users/accounts.service.ts'
import { LoginThrottle } from './modules/users/login-throttle.ts'
import type { PasswordHasher } from './modules/users/passwords.ts'
import {
  authenticateSession,
  type SessionDeps,
  type SessionHolders,
} from './modules/users/sessions.service.ts'
import { userRoutes } from './modules/users/users.routes.ts'
import { anonymousLimit } from './plugins/anonymous-limit.ts'
import { authenticate, enforceScopes, requireApiKey } from './plugins/auth.ts'
import { conditionalRequests } from './plugins/conditional-requests.ts'
import {
  clientErrorHandler,
  drainOnClose,
  MAX_HEADER_BYTES,
  requireHostHeader,
  SERVER_TIMEOUTS,
  type ServerTimeouts,
} from './plugins/connections.ts'
import {
  BODY_LIMIT,
  errorHandlerPlugin,
  type NotFoundPage,
  sendError,
} from './plugins/error-handler.ts'
import { idempotencyHooks } from './plugins/idempotency.ts'
import { trackRoutes } from './plugins/inventory.ts'
import { optionalBodies, useStrictJsonBodies } from './plugins/json-body.ts'
import { metricsPlugin } from './plugins/metrics.ts'
import { openApiRoutes } from './plugins/openapi.ts'
import { publicViews } from './plugins/public-views.ts'
import { userRateLimit } from './plugins/rate-limit.ts'
import { appRoutes } from './web/app.routes.ts'
import { authPageRoutes } from './web/auth-pages.routes.ts'
import { docsRoutes } from './web/docs.routes.ts'
import { wallRoutes } from './web/wall.routes.ts'
import {
  invitePageRoutes,
  isWebUrl,
  linkWebRoutes,
  sendWebError,
  webRoutes,
} from './web/web.routes.ts'

export interface AppDeps {
  database: Database
  plans: Plans
  publicUrl?: string | null
  /** How long an authenticated key is trusted without a lookup (0 disables the cache). */
  keyCacheTtlMs?: number
  /** Fastify's logger option; tests pass false. */
  logger?: FastifyServerOptions['logger']
  /**
   * Where committed writes are announced for live updates; the app owns it and closes it.
   * Default: the database's own (`Database.openEventBus`), so that every instance on one
   * database delivers every change.
   */
  events?: StatusEventBus
  /** Server-Sent Events tuning (heartbeat, per-client buffer bound). */
  sse?: Partial<SseOptions>
  /** Overrides of SERVER_TIMEOUTS (tests shorten them). */
  timeouts?: Partial<ServerTimeouts>
  /** Where the key cache reads the time; tests pass a clock they move by hand. */
  clock?: Clock
  /** Open event streams per user or client address (STREAMS_PER_CLIENT; default 64). */
  streamsPerClient?: ClientLimits['streamsPerClient']
  /** Anonymous requests per client address and minute (ANON_REQUESTS_PER_MINUTE; default 1 200). */
  anonRequestsPerMinute?: ClientLimits['anonRequestsPerMinute']
  /**
   * Which proxies' X-Forwarded-For names the client (TRUST_PROXY): Fastify's `trustProxy` (a
   * hop count, or proxy addresses and CIDR ranges). Default: none, the peer is the client.
   */
  trustProxy?: false | number | string | string[]
  /** How often the history sweep looks for deletions left unswept (HISTORY_SWEEP_INTERVAL_MS). */
  historySweepIntervalMs?: number
  /** How often this instance looks for statuses that went stale (STALE_CHECK_INTERVAL_MS). */
  staleCheckIntervalMs?: number
  /**
   * How often this instance reads the outbox for changes other instances committed
   * (LIVE_RELAY_INTERVAL_MS; PostgreSQL only: docs/postgres.md#live-updates-across-instances).
   */
  liveRelayIntervalMs?: number
  /**
   * Sends e-mail (SMTP_URL; docs/accounts.md#e-mail): verification, password reset and
   * invitation links. Null or absent: no e-mail; accounts start verified, and `statusd user
   * link` is the way in.
   */
  mailer?: Mailer | null
  /** Who may sign up (SIGNUP): `invite` (default) or `open` (docs/accounts.md#signing-up). */
  signup?: 'invite' | 'open'
  /** How passwords are hashed and checked (default scrypt; tests count the checks). */
  passwordHasher?: PasswordHasher
  /**
   * Networks webhooks may reach although they are private (WEBHOOK_ALLOW_NETWORKS: CIDR
   * ranges; docs/notifications.md#outbound-safety). Default: none.
   */
  webhookAllowNetworks?: readonly string[]
  /**
   * The VAPID `sub` claim push services see (docs/notifications.md#browser-push). Default:
   * the public https URL, else a mailto: placeholder.
   */
  vapidSubject?: string
  /**
   * The delivery worker (docs/notifications.md#delivery). It starts when the app listens,
   * unless `autoStart` is false (tests then run its passes themselves: `app.deliveryWorker`).
   */
  notifications?: {
    autoStart?: boolean
    /** Overrides of the outbound client (tests shorten the timeout, answer DNS). */
    outbound?: Omit<OutboundOptions, 'allowNetworks'>
  } & Pick<
    DeliveryWorkerOptions,
    'concurrency' | 'claimBatch' | 'pollMs' | 'random' | 'leaseMs' | 'fanOutBatch'
  >
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The notification delivery worker (docs/notifications.md#delivery). */
    deliveryWorker: DeliveryWorker
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

/** A deletion whose sweep was cut short (a crash, another instance's shutdown) waits at most this. */
export const HISTORY_SWEEP_INTERVAL_MS = 5 * 60 * 1000

/**
 * At shutdown, each event stream's client is told to reconnect within this (a random delay
 * per stream): at once, but 10 000 clients over a second rather than in one burst
 * (docs/operations.md#shutdown).
 */
export const SHUTDOWN_RECONNECT_SPREAD_MS = 1_000

// Bodies are validated strictly: no coercion ("3" is not 3), no defaults filled in, nothing
// removed, every error reported. Query strings arrive as text, so they alone are coerced.
const ajvOptions = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: false,
  strict: true,
} as const
const bodyAjv = addFormats.default(new Ajv({ ...ajvOptions, coerceTypes: false }))
const queryAjv = addFormats.default(new Ajv({ ...ajvOptions, coerceTypes: true }))

type CompilersFactory = NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']

const REQUEST_ID = /^[\w.:-]{1,64}$/

/**
 * Fastify's `trustProxy`. note: a hop count n is given as the function Fastify itself makes of
 * one (trust the nearest n hops), since its types leave numbers out.
 */
const trustProxyOption = (
  trust: NonNullable<AppDeps['trustProxy']>,
): FastifyServerOptions['trustProxy'] =>
  typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust

/** Builds the whole service as a Fastify instance that never listens (tests inject into it). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { database, plans } = deps
  const publicUrl = deps.publicUrl ?? null
  const clock = deps.clock ?? systemClock
  // note: never the request's Host, which the client chooses (docs/security.md)
  // note: the listening origin is remembered once the server listens (its address stays):
  // every value write asks for it, and server.address() showed in a PATCH's profile
  let listening: string | undefined
  const linkBase = () => {
    if (publicUrl !== null) return publicUrl
    if (listening !== undefined) return listening
    const address = app.server.address()
    if (address === null) return listeningOrigin(address)
    listening = listeningOrigin(address)
    return listening
  }
  const keyCache = new KeyCache({
    ttlMs: deps.keyCacheTtlMs ?? 5_000,
    clock: deps.clock ?? systemClock,
  })
  const timeouts = { ...SERVER_TIMEOUTS, ...deps.timeouts }
  const schemas = new LazySchemas({ body: bodyAjv, query: queryAjv })
  const app = Fastify({
    logger: deps.logger ?? false,
    // who the client is (request.ip), for the per-client limits (docs/operations.md#limits-per-client)
    trustProxy: trustProxyOption(deps.trustProxy ?? false),
    // note: the cast: Fastify types this factory after @fastify/ajv-compiler's pool API, but
    // calls what it returns with the route's { schema, httpPart }, as setValidatorCompiler does
    schemaController: { compilersFactory: schemas.compilersFactory as unknown as CompilersFactory },
    bodyLimit: BODY_LIMIT,
    // slow clients are cut off (OWASP API4): see SERVER_TIMEOUTS
    requestTimeout: timeouts.requestTimeout,
    connectionTimeout: timeouts.connectionTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    http: {
      headersTimeout: timeouts.headersTimeout,
      requestTimeout: timeouts.requestTimeout,
      connectionsCheckingInterval: timeouts.checkInterval,
      maxHeaderSize: MAX_HEADER_BYTES,
      // answered by requireHostHeader instead, with an error body (Node's has none)
      requireHostHeader: false,
    },
    clientErrorHandler,
    // answered by drainOnClose instead, with the API's error body (docs/api.md#errors)
    return503OnClosing: false,
    // an upstream proxy's request id is kept when it looks like one; otherwise a fresh one
    requestIdHeader: false,
    genReqId: (req) => {
      const upstream = req.headers['x-request-id']
      // note: never echo (and log) something that may hold an API key (KEY_LIKE) as a request id
      return typeof upstream === 'string' && REQUEST_ID.test(upstream) && !KEY_LIKE.test(upstream)
        ? upstream
        : randomUUID()
    },
    routerOptions: {
      ignoreTrailingSlash: true,
      // as long as a URL can be (Node caps headers at 16 KiB): an over-long key gets
      // 400 invalidStatusKey from its own check, never a router 414
      maxParamLength: 16_384,
    },
    // errors raised before routing (malformed URL) get the API's error body too, or on the share
    // page's and badge's paths their page or badge; note: they skip the onSend hooks, so the
    // request id and the API's headers are set here
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id)
      reply.raw.once('finish', () => app.observeResponse?.(request, reply))
      if (isWebUrl(request.url)) return sendWebError(err, request, reply)
      reply.headers(API_RESPONSE_HEADERS)
      sendError(err, request, reply)
    },
  }).withTypeProvider<TypeBoxTypeProvider>()

  trackRoutes(app)
  app.decorate('compileSchemas', () => schemas.compileAll())
  // route schemas compile on first use only: those of routes never called would take memory
  // for nothing (docs/performance.md#cold-start-and-memory)
  // note: only JSON bodies; without this, text/plain would reach validation as a string
  app.removeContentTypeParser('text/plain')
  useStrictJsonBodies(app)
  app.addHook('onRequest', requireHostHeader)
  drainOnClose(app, timeouts)
  // no id, key or share id holds NUL, and PostgreSQL cannot even compare text holding it
  app.addHook('onRequest', (request, _reply, done) => {
    if (/%00/i.test(request.url))
      throw validationError(
        [{ field: 'url', message: 'must not contain NUL (%00)' }],
        'Request URL is invalid',
      )
    done()
  })
  app.addHook('onSend', (request, reply, _payload, done) => {
    reply.header('x-request-id', request.id)
    // every response, not only the API's: no browser second-guesses a content type
    reply.header('x-content-type-options', 'nosniff')
    done()
  })
  app.addHook('onClose', () => database.close())

  const events: StatusEventBus =
    deps.events ??
    (await database.openEventBus({
      ...STATUS_CHANGES,
      log: app.log,
      onListenerError: (err) => app.log.error({ err }, 'a live-update listener failed'),
    }))
  const sse: SseOptions = { ...DEFAULT_SSE_OPTIONS, ...deps.sse }
  const feeds = new StatusFeeds({ db: database.db, plans, events, log: app.log, clock })
  const boardStreams = new BoardStreams()
  // the public views as rendered, until their status changes (docs/sharing.md#caching-of-public-views):
  // told by the bus of every instance's changes, by this instance's writes at once
  // (`committed` below), and emptied after a gap in what the bus delivered
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
      intervalMs: deps.liveRelayIntervalMs ?? LIVE_RELAY_INTERVAL_MS,
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
  // a key revoked anywhere (another instance, the CLI: on PostgreSQL through NOTIFY) is
  // forgotten and its streams end at once; after a gap in delivery every open key is checked
  const revocations: KeyRevocationBus = await database.openEventBus({
    ...KEY_REVOCATIONS,
    log: app.log,
    onListenerError: (err) => app.log.error({ err }, 'a key revocation listener failed'),
  })
  revocations.subscribe(KEY_REVOCATION_TOPIC, (change) => {
    if ('keyId' in change) {
      keyCache.forgetKey(change.keyId)
      streamCredentials.endKey(change.keyId)
    } else if ('userId' in change) {
      keyCache.forgetUser(change.userId)
      void streamCredentials.checkAll()
    } else streamCredentials.endSessions(change.sessionIds)
  })
  revocations.onResync?.(() => {
    keyCache.clear()
    void streamCredentials.checkAll()
  })
  // note: open event streams would keep close() waiting for ever; end them first. Each client
  // is told to reconnect within SHUTDOWN_RECONNECT_SPREAD_MS (the server no longer accepts
  // connections by now: drainOnClose), spread so they do not all arrive at the same moment
  app.addHook('preClose', async () => {
    streamCredentials.close()
    feeds.closeAll(() => Math.floor(Math.random() * SHUTDOWN_RECONNECT_SPREAD_MS))
  })
  app.addHook('onClose', () => events.close())
  app.addHook('onClose', () => revocations.close())
  // a write refused because storage is full or read-only makes /readyz 503 until one succeeds
  // again; every writer's unit and every request's error tells it
  const writeHealth = new WriteHealth({
    clock: deps.clock ?? systemClock,
    probe: () => database.probeWrite(),
  })
  const writer = writeHealth.watch(database.writer)
  app.addHook('onError', (_request, _reply, err, done) => {
    writeHealth.failed(err)
    done()
  })
  // deleted statuses' history goes in batches, in the background (docs/operations.md#history-sweep)
  const historySweep = new HistorySweeper({
    deps: { db: database.db, writer },
    intervalMs: deps.historySweepIntervalMs ?? HISTORY_SWEEP_INTERVAL_MS,
    onError: (err) => app.log.warn({ err }, "sweeping deleted statuses' history failed"),
  })
  historySweep.start()
  app.addHook('preClose', () => historySweep.close())
  // silences that turned stale are announced once each, whichever instance sees them first
  // (docs/notifications.md#staleness)
  const staleDetector = new StaleDetector({
    deps: { db: database.db, writer, events, clock, linkBase },
    intervalMs: deps.staleCheckIntervalMs ?? STALE_CHECK_INTERVAL_MS,
    onError: (err) => app.log.warn({ err }, 'looking for stale statuses failed'),
  })
  app.decorate('staleDetector', staleDetector)
  app.addHook('onReady', async () => staleDetector.start())
  app.addHook('preClose', () => staleDetector.close())
  const services: ServiceDeps = {
    db: database.db,
    plans,
    events,
    committed: (change) => rendered.invalidate(change.statusId),
    writer,
    historySweep,
    clock,
    linkBase,
  }
  // notifications (docs/notifications.md): every request to an address a user gave goes
  // through the guarded client; the worker delivers what writes recorded in the outbox
  const { autoStart = true, outbound: outboundOptions, ...workerOptions } = deps.notifications ?? {}
  const outbound = new OutboundClient({
    ...outboundOptions,
    allowNetworks: parseNetworks((deps.webhookAllowNetworks ?? []).join(',')),
  })
  // browser push (docs/notifications.md#browser-push): the VAPID key pair, made at first start
  const vapidKeys = new VapidKeys(database.db, clock)
  app.addHook('onReady', async () => {
    await vapidKeys
      .get()
      .catch((err: unknown) =>
        app.log.warn({ err }, 'browser push: the VAPID key pair could not be read or made yet'),
      )
  })
  const channelTypes = makeChannelTypes({
    db: database.db,
    clock,
    mailer: deps.mailer ?? null,
    outbound,
    vapid: vapidKeys,
    vapidSubject: deps.vapidSubject ?? vapidSubject(publicUrl, null),
  })
  const deliveryWorker = new DeliveryWorker({
    ...workerOptions,
    types: channelTypes,
    db: database.db,
    writer,
    clock,
    publicUrl: linkBase,
    log: app.log,
    mailer: deps.mailer ?? null,
  })
  app.decorate('deliveryWorker', deliveryWorker)
  if (autoStart) app.addHook('onListen', async () => deliveryWorker.start())
  // before storage closes: the sends in flight settle (each bounded by its timeout)
  app.addHook('preClose', async () => {
    await deliveryWorker.close()
    await outbound.close()
  })
  const channels: ChannelDeps = {
    db: database.db,
    writer,
    clock,
    types: channelTypes,
    sendContext: () => ({ publicUrl: linkBase() }),
    onEvent: () => deliveryWorker.kick(),
  }
  // one count for both stream routes: a user's keyed streams, an address's anonymous ones
  const streamQuota = new StreamQuota(
    deps.streamsPerClient ?? DEFAULT_CLIENT_LIMITS.streamsPerClient,
  )
  app.decorate('streamQuota', streamQuota)

  // what ends or changes through this instance ends or is forgotten on every instance
  // (docs/api.md#authentication): here at once, elsewhere through the credentials bus
  const holders: SessionHolders = {
    endSessions(sessionIds) {
      streamCredentials.endSessions(sessionIds)
      void revocations.publish({ sessionIds: [...sessionIds] })
    },
    userChanged(userId) {
      keyCache.forgetUser(userId)
      void streamCredentials.checkAll()
      void revocations.publish({ userId })
    },
  }
  // sessions (docs/accounts.md#sessions): what a browser signed in with, server-side
  const sessions: SessionDeps = { db: database.db, holders, clock }
  const accounts: AccountDeps = {
    db: database.db,
    plans,
    clock,
    holders,
    throttle: new LoginThrottle({ clock }),
    ...(deps.passwordHasher && { hasher: deps.passwordHasher }),
  }
  // e-mail (docs/accounts.md#e-mail): verification, password reset and sign-in links
  const mail = new AccountMail({
    db: database.db,
    mailer: deps.mailer ?? null,
    linkBase,
    log: app.log,
    clock,
    holders,
    keys: { cache: keyCache, sessions: streamCredentials, revocations },
    ...(deps.passwordHasher && { hasher: deps.passwordHasher }),
  })
  // messages under way are sent before storage closes (onClose hooks run last-added first)
  app.addHook('onClose', () => mail.idle())

  // e-mail channels' confirmation links (docs/notifications.md#e-mail)
  const channelConfirmations = {
    state: (token: string) => channelConfirmationState(database.db, clock, token),
    confirm: (token: string) => confirmEmailChannel(database.db, clock, token),
  }

  // the app's page answers a browser's unknown address once the app's routes have loaded it
  const notFoundPage: NotFoundPage = { send: null }
  await app.register(errorHandlerPlugin, { notFoundPage })
  // the cookies of every request, parsed before authentication reads the session's
  await app.register(cookie)
  // What each route declares in its config (plugins/route-facts.ts) the plugins below act on
  // and the OpenAPI document shows; each reads the routes registered after it.
  openApiRoutes(app)
  authenticate(app, database.db, {
    cache: keyCache,
    clock,
    publicUrl,
    emailVerification: (deps.mailer ?? null) !== null,
  })
  enforceScopes(app)
  idempotencyHooks(app)
  conditionalRequests(app)
  optionalBodies(app)
  publicViews(app)
  await anonymousLimit(app, {
    max: deps.anonRequestsPerMinute ?? DEFAULT_CLIENT_LIMITS.anonRequestsPerMinute,
  })
  await app.register(docsRoutes)

  await app.register(healthRoutes, { ping: () => database.ping(), writes: writeHealth })
  await app.register(metricsPlugin, { gauges: database.gauges, streams: streamQuota })

  // Everything under /v1 takes an API key or the session cookie (`verified` unless a route
  // declares otherwise), then is rate limited per user and plan.
  await app.register(async (v1) => {
    requireApiKey(v1)
    // per-user data: never cached by intermediaries, never sniffed or framed by a browser
    v1.addHook('onSend', (_request, reply, _payload, done) => {
      reply.headers(API_RESPONSE_HEADERS)
      done()
    })
    await userRateLimit(v1, { plans, counter: database.requestCounter })
    await v1.register(userRoutes)
    await v1.register(profileRoutes, { accounts, sessions, mail })
    await v1.register(emailVerificationRoutes, { mail })
    await v1.register(apiKeyRoutes, {
      deps: {
        db: database.db,
        cache: keyCache,
        sessions: streamCredentials,
        revocations,
        statusReach: reachableStatuses,
      },
    })
    await v1.register(passkeyRoutes, { db: database.db, clock, publicUrl })
    await v1.register(statusRoutes, { deps: services, publicUrl })
    await v1.register(sharingRoutes, { deps: services, publicUrl })
    await v1.register(invitationRoutes, {
      deps: services,
      publicUrl,
      linkBase,
      clock,
      mailer: deps.mailer ?? null,
    })
    await v1.register(historyRoutes, { deps: services, publicUrl })
    await v1.register(webpushRoutes, { keys: vapidKeys })
    await v1.register(searchRoutes, { deps: services, publicUrl })
    await v1.register(shareLinkRoutes, { deps: services, publicUrl })
    await v1.register(channelRoutes, { deps: channels })
    await v1.register(ruleRoutes, { deps: services })
    await v1.register(statusEventsRoutes, {
      db: database.db,
      feeds,
      sse,
      quota: streamQuota,
      streamCredentials,
    })
    await v1.register(boardRoutes, { deps: services, publicUrl, boardStreams })
  })

  // Signing up, in and out: anyone may call them (they declare `auth: 'none'`)
  await app.register(authRoutes, {
    accounts,
    sessions,
    signup: deps.signup ?? 'invite',
    publicUrl,
    mail,
  })
  // following e-mailed and printed links: JSON, and the pages the links open
  await app.register(accountMailRoutes, { mail, publicUrl })
  await app.register(authPageRoutes, {
    prefix: '/auth',
    mail,
    publicUrl,
    channels: channelConfirmations,
  })

  // Public views of public statuses: outside the /v1 scope above, so no API key is asked for
  // (they declare `auth: 'none'`).
  await app.register(shareRoutes, { deps: services, publicUrl, rendered })
  await app.register(invitationPreviewRoutes, { deps: services, publicUrl, linkBase, clock })
  // signing in with a passkey: anyone may try (docs/api.md#passkeys)
  await app.register(passkeySignInRoutes, { db: database.db, clock, publicUrl })
  await app.register(shareEventsRoutes, { db: database.db, feeds, sse, quota: streamQuota })
  // a public board's JSON and its one stream (docs/app.md#boards-and-the-wall)
  await app.register(publicBoardRoutes, {
    deps: services,
    feeds,
    sse,
    quota: streamQuota,
    boardStreams,
  })
  // a private share link's views: its token is the credential (docs/accounts.md#private-share-links)
  await app.register(shareLinkViewRoutes, { deps: services, publicUrl })
  await app.register(shareLinkEventsRoutes, {
    db: database.db,
    feeds,
    sse,
    quota: streamQuota,
    deps: services,
  })
  // the share page and badge: HTML/SVG, with their own not-found and error pages
  await app.register(webRoutes, { prefix: '/s', deps: services, linkBase, rendered })
  await app.register(appRoutes, { notFoundPage })
  await app.register(invitePageRoutes, { prefix: '/invite', deps: services, clock })
  await app.register(linkWebRoutes, { prefix: '/l', deps: services })
  // a public board's wall page (docs/app.md#boards-and-the-wall)
  await app.register(wallRoutes, { prefix: '/b', deps: services })

  return app
}
