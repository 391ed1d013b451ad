import type { FastifyInstance, FastifyRequest } from 'fastify'
import { buildApp } from './app.ts'
import type { Config } from './config.ts'
import { createDatabase } from './db/create-database.ts'
import { migrateToLatest } from './db/migrate.ts'
import { systemClock } from './lib/clock.ts'
import {
  countOpenDescriptors,
  readDescriptorLimit,
  type StreamBudget,
  streamBudget,
} from './lib/descriptors.ts'
import { createMailer, describeSmtpUrl } from './lib/mailer.ts'
import { redactHeaderValue, redactRequestUrl } from './lib/redact.ts'
import { pruneSecurityEvents } from './modules/audit/audit.service.ts'
import { startBackupSchedule } from './modules/backups/backups.service.ts'
import { pruneIdempotencyRecords } from './modules/idempotency/idempotency.service.ts'
import { describeMqttUrl } from './modules/mqtt/mqtt-bridge.ts'
import { vapidSubject } from './modules/notifications/vapid-keys.ts'
import { pruneEndedShareLinks } from './modules/statuses/share-links.service.ts'
import { ensureFirstUser } from './modules/users/first-user.ts'
import { createSetupLink } from './modules/users/setup.service.ts'

const HOUSEKEEPING_INTERVAL_MS = 60 * 60 * 1000
/** The first housekeeping, a while after the start's own work. */
const FIRST_HOUSEKEEPING_MS = 60 * 1000

/** Redacted request fields: API keys never reach a log line. */
const REDACT = ['req.headers["service-api-key"]', 'req.headers.authorization']

/**
 * Fastify's request serializer, with the URL redacted (a key sent in the query string) and
 * the header values it logs too (a key sent as a Host or Accept-Version, by mistake or to
 * plant it in the log).
 */
const serializeRequest = (req: FastifyRequest) => ({
  method: req.method,
  url: redactRequestUrl(req.url),
  version: redactHeaderValue(
    typeof req.headers['accept-version'] === 'string' ? req.headers['accept-version'] : undefined,
  ),
  host: redactHeaderValue(req.host),
  remoteAddress: req.ip,
  remotePort: req.socket?.remotePort,
})

/**
 * Process entry: config → database → migrations → first user → app → listen.
 * SIGTERM and SIGINT drain in-flight requests and close the database.
 */
/**
 * Starts the service. With `json`, the first start's key is printed as one JSON line, for the
 * script that starts statusd; the log is JSON lines either way.
 */
export async function serve(
  config: Config,
  { json = false }: { json?: boolean } = {},
): Promise<FastifyInstance> {
  // note: a failed checkpoint is not a failed request (writes stay durable in the log), but
  // the log grows until one succeeds: it is logged, by the app's logger once there is one
  let reportCheckpointError = (err: Error): void => {
    process.stderr.write(`statusd: SQLite checkpoint failed: ${err.message}\n`)
  }
  const database = createDatabase(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    ...(config.databaseListenUrl !== null && { listenUrl: config.databaseListenUrl }),
    busyTimeoutMs: config.sqliteBusyTimeoutMs,
    checkpoints: { onError: (err) => reportCheckpointError(err) },
  })
  let applied: string[]
  try {
    applied = await migrateToLatest(database.db)
  } catch (err) {
    await database.close()
    throw err
  }
  let app: FastifyInstance
  try {
    app = await buildApp({
      database,
      plans: config.plans,
      publicUrl: config.publicUrl,
      keyCacheTtlMs: config.authCacheSeconds * 1000,
      streamsPerClient: config.streamsPerClient,
      anonRequestsPerMinute: config.anonRequestsPerMinute,
      trustProxy: config.trustProxy,
      mailer: config.smtpUrl === null ? null : createMailer(config.smtpUrl, config.mailFrom),
      signup: config.signup,
      webhookAllowNetworks: config.webhookAllowNetworks,
      vapidSubject: vapidSubject(
        config.publicUrl,
        config.smtpUrl === null ? null : config.mailFrom,
      ),
      staleCheckIntervalMs: config.staleCheckIntervalMs,
      liveRelayIntervalMs: config.liveRelayIntervalMs,
      backups:
        config.backupDir === null
          ? null
          : {
              dir: config.backupDir,
              url: config.databaseUrl,
              everyMs: config.backupEveryMs,
              keep: config.backupKeep,
            },
      mqtt: config.mqtt,
      logger: { level: config.logLevel, redact: REDACT, serializers: { req: serializeRequest } },
    })
  } catch (err) {
    await database.close()
    throw err
  }

  reportCheckpointError = (err) =>
    app.log.error({ err }, 'SQLite checkpoint failed: the log grows until one succeeds')

  // housekeeping: stored idempotent responses are kept for their 24 h window only,
  // private share links until they leave their owner's list, and the security log as
  // long as it is kept (docs/security.md#security-log); once soon after the start
  // too, so an instance restarted more often than hourly still prunes
  const prune = async () => {
    await pruneIdempotencyRecords(database.db).catch((err) =>
      app.log.warn({ err }, 'pruning idempotency records failed'),
    )
    await pruneEndedShareLinks(database.db).catch((err) =>
      app.log.warn({ err }, 'pruning ended share links failed'),
    )
    await pruneSecurityEvents(database.db).catch((err) =>
      app.log.warn({ err }, 'pruning the security log failed'),
    )
  }
  const housekeeping = setInterval(prune, HOUSEKEEPING_INTERVAL_MS)
  housekeeping.unref()
  const firstPrune = setTimeout(prune, FIRST_HOUSEKEEPING_MS)
  firstPrune.unref()
  app.addHook('onClose', async () => {
    clearInterval(housekeeping)
    clearTimeout(firstPrune)
  })

  // scheduled backups (docs/operations.md#scheduled-backups): one instance at a time takes each
  if (config.backupDir !== null && config.backupEveryMs !== null) {
    const schedule = startBackupSchedule(
      { database, url: config.databaseUrl, dir: config.backupDir, clock: systemClock },
      { everyMs: config.backupEveryMs, keep: config.backupKeep },
      app.log,
    )
    app.addHook('onClose', () => schedule.stop())
  }

  const shutdown = (signal: string) => {
    app.log.info({ signal }, 'shutting down: draining requests')
    // note: close() stops accepting, waits for in-flight requests, then onClose closes storage
    app.close().then(
      () => process.exit(0),
      (err) => {
        app.log.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.once('SIGTERM', shutdown)
  process.once('SIGINT', shutdown)

  let address: string
  let budget: StreamBudget
  let first: Awaited<ReturnType<typeof ensureFirstUser>>
  try {
    // note: the bound address, not config.port: with PORT=0 this line is where the port is read
    address = await app.listen({ port: config.port, host: config.host })
    // note: before any other await, so no stream opens unbounded: counted once storage is
    // open and the server listens, which is what the process holds for good
    budget = limitStreams(app, config.streamsMax, database.pooledConnections ?? 0)
    // note: after listening, so that a start that cannot listen (port taken) never creates
    // the first user and loses its key, printed only by the start that made it
    first = await ensureFirstUser(database.db, config.plans)
  } catch (err) {
    // a start that fails lets go of everything it opened (storage, LISTEN connection,
    // checkpoint thread), so the process ends with status 1 and a supervisor restarts it
    process.removeListener('SIGTERM', shutdown)
    process.removeListener('SIGINT', shutdown)
    await app.close()
    throw err
  }
  // the schema migrations this start applied, if any: an upgrade shows what it changed
  app.log.info(
    {
      address,
      storage: database.describe,
      // never the SMTP URL itself: it may hold the SMTP password
      email: config.smtpUrl === null ? 'off' : describeSmtpUrl(config.smtpUrl),
      // never the broker's URL itself: it may hold its password
      mqtt: config.mqtt === null ? 'off' : describeMqttUrl(config.mqtt.url),
      ...(applied.length > 0 && { migrationsApplied: applied }),
      streams: {
        max: budget.streams,
        descriptorLimit: budget.descriptorLimit,
        descriptorsHeld: budget.descriptorsHeld,
        maxConnections: budget.maxConnections,
      },
    },
    'statusd ready',
  )
  if (!budget.limitRead)
    app.log.warn(
      { assumedDescriptorLimit: budget.descriptorLimit, streamsMax: budget.streams },
      'the file-descriptor limit cannot be read here: stream capacity assumes it; set STREAMS_MAX to choose it',
    )
  if (budget.streams === 0)
    app.log.warn(
      { descriptorLimit: budget.descriptorLimit, descriptorsHeld: budget.descriptorsHeld },
      'the file-descriptor limit leaves no room for live streams: every stream is refused; raise the limit (LimitNOFILE, ulimit -n)',
    )
  if (config.smtpUrl !== null && config.publicUrl === null)
    app.log.warn(
      { address },
      'SMTP_URL is set without PUBLIC_URL: mailed links point at the listening address; set PUBLIC_URL to the URL people reach the service at',
    )
  if (first) {
    const base = config.publicUrl ?? address
    // the way into the app for the person who started it (docs/app.md#the-first-start):
    // the first user has no address nor password yet; the link's page asks for them, once
    const link = await createSetupLink(database.db, systemClock, first.user.id, base)
    printFirstKey(first.user.id, first.user.plan, first.key, base, link.url, json)
  }
  return app
}

/**
 * Sets the server-wide stream capacity and the connection cap from the file-descriptor limit
 * (docs/operations.md#server-wide-stream-capacity): streams beyond it are refused with 503
 * serverBusy, and connections beyond theirs are closed as they arrive, so the process never
 * runs out of descriptors and ordinary requests keep being answered.
 */
function limitStreams(
  app: FastifyInstance,
  streamsMax: number | null,
  storageConnections: number,
): StreamBudget {
  const budget = streamBudget({
    limit: readDescriptorLimit(),
    held: countOpenDescriptors(),
    storageConnections,
    streamsMax,
  })
  app.streamQuota.capacity = budget.streams
  if (budget.maxConnections !== null) app.server.maxConnections = budget.maxConnections
  return budget
}

/** The first user's key goes to stdout once, never into the JSON log. */
function printFirstKey(
  userId: string,
  plan: string,
  key: string,
  base: string,
  setupUrl: string,
  json: boolean,
): void {
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ firstStart: { userId, plan, key, url: base, setupUrl } })}\n`,
    )
    return
  }
  process.stdout.write(
    [
      '',
      '  statusd: first start on an empty database.',
      `  Created user ${userId} (verified, plan "${plan}") and this API key, shown only now:`,
      '',
      `      ${key}`,
      '',
      `  Try:  curl -H 'service-api-key: ${key}' ${base}/v1/checkAuth`,
      '',
      '  Set up your account in the browser with this one-time link (valid one day): your name,',
      '  e-mail address and a password or a passkey, and you are signed in as the operator:',
      '',
      `      ${setupUrl}`,
      '',
      '',
    ].join('\n'),
  )
}
