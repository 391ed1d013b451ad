import { createRequire } from 'node:module'
import { Kysely, PostgresDialect, sql } from 'kysely'
import type pg from 'pg'
import type { DB } from '../database.ts'
import { type Database, type DatabaseOptions, DEFAULT_POOL_SIZE } from '../engine.ts'
import { transactionPerWrite, type Writer } from '../writer.ts'
import { primaryClientClass } from './connect-primary.ts'
import { postgresOutboxTail } from './outbox-tail.ts'
import { PgEventBus } from './pg-event-bus.ts'
import { pgRequestCounter } from './pg-request-counter.ts'
import { type PostgresUrl, parsePostgresUrl } from './postgres-url.ts'

/** A PostgreSQL database: a pool, and connections outside it for long sessions. */
export interface PostgresDatabase extends Database {
  /**
   * A new connection outside the pool for a long-lived session such as the event bus's
   * LISTEN: to `DATABASE_LISTEN_URL` when set (straight to PostgreSQL, past a pooler), else
   * configured like the pool's (same URL, TLS, search_path, connect timeout). Not connected
   * yet; the caller connects and ends it. Its `application_name` is the pool's (or the listen
   * URL's own) with `:<purpose>` added, so it can be told apart in `pg_stat_activity`.
   */
  dedicatedClient(purpose: string): pg.Client
}

// How long a request waits for a pooled connection (a new one, or a busy pool's next free
// one) before it fails with 503; and how long /readyz waits for its probe.
const CONNECT_TIMEOUT_MS = 5_000
const PING_TIMEOUT_MS = 2_000

// note: pg is loaded only when the database is PostgreSQL (cold start on SQLite)
const require = createRequire(import.meta.url)

/**
 * Opens a pool on the PostgreSQL database a `postgres://` URL names; it connects on the first
 * query. Beyond a Database, it opens dedicated clients (the event bus's LISTEN).
 */
export function openPostgres(url: string, options: DatabaseOptions = {}): PostgresDatabase {
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE
  const connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS
  const { Pool, Client, types } = require('pg') as typeof pg
  const listenUrl = options.listenUrl ?? url
  const listenVia = options.listenUrl === undefined ? 'DATABASE_URL' : 'DATABASE_LISTEN_URL'
  if (!Number.isInteger(poolSize) || poolSize < 1)
    throw new Error(`database pool size must be a positive integer, got ${poolSize}`)
  // note: throws on a URL pg cannot open or statusd does not support (config.ts checks it
  // first, with the same message)
  const target = parsePostgresUrl(url)
  const listenTarget =
    options.listenUrl === undefined
      ? target
      : parsePostgresUrl(options.listenUrl, 'DATABASE_LISTEN_URL')
  // the first host's URL: user, database and parameters are the same for every host
  const firstUrl = target.hosts[0]?.url ?? url
  const firstListenUrl = listenTarget.hosts[0]?.url ?? listenUrl
  const parsed = new URL(firstUrl)
  const parsedListen = new URL(firstListenUrl)
  const applicationName = parsed.searchParams.get('application_name') ?? 'statusd'
  const listenName = parsedListen.searchParams.get('application_name') ?? applicationName
  // several hosts, or a primary required: connections go to the host that takes writes
  // (connect-primary.ts); otherwise pg's own client, as pg connects
  const primaryClient = (of: PostgresUrl, name: string) =>
    of.hosts.length > 1 || of.sessionAttrs === 'read-write'
      ? primaryClientClass(Client, of, {
          connectionTimeoutMillis: connectTimeoutMs,
          application_name: `${name}:probe`,
        })
      : undefined
  const failover = primaryClient(target, applicationName)
  // a DATABASE_LISTEN_URL of several hosts looks for its primary on its own
  const listenFailover =
    options.listenUrl === undefined ? failover : primaryClient(listenTarget, listenName)
  const PoolClient = failover?.PrimaryClient ?? Client
  const pool = new Pool({
    connectionString: firstUrl,
    Client: PoolClient,
    max: poolSize,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    // shows in pg_stat_activity; a URL's own application_name wins
    application_name: applicationName,
    // bigint (int8: the status counters, counts) as a number, as SQLite gives it: pg's
    // default is a string. They stay far below 2^53.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === types.builtins.INT8
          ? Number
          : types.getTypeParser(oid, format)) as typeof types.getTypeParser,
    },
  })
  // note: an idle pooled connection that dies (server restart, admin shutdown) emits 'error'
  // on the pool; unhandled, that would crash the process. The pool has already dropped it and
  // the next query opens a fresh one, so there is nothing to do here.
  pool.on('error', () => {})
  // note: … and a connection that dies while checked out (a query in flight: a server restart,
  // failover, pg_terminate_backend) emits 'error' on its client, which pg-pool no longer
  // listens to then. The query itself fails (503), the pool drops the client on release; the
  // event must not crash the process, so every client gets a listener for its whole life.
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) })
  const dedicatedClient = (purpose: string) => {
    // note: pg lets a URL's parameters override the config, so the URL's own
    // application_name is taken out for the suffixed one to show
    let connectionString = firstListenUrl
    if (parsedListen.searchParams.has('application_name')) {
      const copy = new URL(parsedListen.href)
      copy.searchParams.delete('application_name')
      connectionString = copy.href
    }
    return new (listenFailover?.PrimaryClient ?? Client)({
      connectionString,
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      // a peer that vanished without a FIN is noticed in seconds, not hours
      keepAliveInitialDelayMillis: 10_000,
      application_name: `${listenName}:${purpose}`,
    })
  }
  // commits run in parallel on pooled connections (and the server groups their WAL flushes)
  // note: with target_session_attrs=any a read-only host will do: nothing to look for
  const writer =
    failover && target.sessionAttrs === 'read-write'
      ? dropReadOnly(transactionPerWrite(db), failover.locator)
      : transactionPerWrite(db)
  return {
    db,
    engine: 'postgres',
    writer,
    describe: `postgres ${target.hosts.map((h) => h.label).join(',')}${parsed.pathname}`,
    gauges: [],
    async sizeBytes() {
      const { rows } = await sql<{
        bytes: string
      }>`select pg_database_size(current_database()) as bytes`.execute(db)
      return Number(rows[0]?.bytes ?? 0)
    },
    pooledConnections: poolSize,
    async ping() {
      let timer: NodeJS.Timeout | undefined
      const probe = pool.query('select 1').then(
        () => true,
        () => false,
      )
      const timeout = new Promise<boolean>((done) => {
        timer = setTimeout(() => done(false), PING_TIMEOUT_MS)
      })
      try {
        return await Promise.race([probe, timeout])
      } finally {
        clearTimeout(timer)
      }
    },
    // a temporary table, gone at commit: catalog rows written and committed, which a read-only
    // server or transaction refuses (25006)
    async probeWrite() {
      await writer.run(async (tx) => {
        await sql`create temporary table statusd_write_probe (x integer) on commit drop`.execute(tx)
      })
    },
    dedicatedClient,
    // every instance on the database delivers every change: NOTIFY in the write's
    // transaction, and one LISTEN connection per instance and kind of message
    // (`<application_name>:listen`, `…:listen-keys` for key revocations)
    async openEventBus(options) {
      const purpose = options.channel === undefined ? 'listen' : `listen-${options.channel}`
      const bus = new PgEventBus({
        db,
        ...options,
        openClient: () => dedicatedClient(purpose),
        // what the start's NOTIFY round trip says when it fails (pg-event-bus.ts)
        listenVia,
      })
      await bus.start()
      return bus
    },
    // the outbox in commit order: every instance reads the status events all of them
    // committed, so a change whose NOTIFY never came still reaches its streams
    outboxTail: postgresOutboxTail(db),
    // instances share the database, so they share the count of each user's requests
    requestCounter: pgRequestCounter(pool),
    // note: Kysely ends the pool only when it ran a query itself; a pool used only by the
    // probes or the request counter would otherwise keep its idle connections open
    async close() {
      await db.destroy()
      if (!pool.ending) await pool.end()
    },
  }
}

/**
 * A write refused as read-only (25006) on a pooled connection means its host is a standby
 * now (demoted, or the URL lists it first): the connections to it are dropped and new ones
 * look for the primary (docs/postgres.md#failover).
 */
function dropReadOnly(writer: Writer, locator: { readOnlySeen(): void }): Writer {
  const seen = (err: unknown): never => {
    if ((err as { code?: unknown } | undefined)?.code === '25006') locator.readOnlySeen()
    throw err
  }
  return { run: (work) => writer.run(work).catch(seen) }
}
