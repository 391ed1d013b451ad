import { isIP } from 'node:net'
import { problemWithDatabaseUrl, problemWithListenUrl } from './db/database-url.ts'
import { DEFAULT_BUSY_TIMEOUT_MS, DEFAULT_POOL_SIZE } from './db/engine.ts'
import { DEFAULT_CLIENT_LIMITS } from './lib/client-limits.ts'
import { parseNetworks } from './lib/outbound.ts'
import { LIVE_RELAY_INTERVAL_MS } from './modules/events/live-relay.ts'
import { DEFAULT_PLANS, loadPlansFile, type Plans } from './modules/plans/plans.ts'
import { STALE_CHECK_INTERVAL_MS } from './modules/statuses/staleness.ts'

/**
 * Which proxies' `X-Forwarded-For` names the client (`TRUST_PROXY`): none (false), the
 * nearest n hops, or the proxies at these addresses and CIDR ranges.
 */
export type TrustProxy = false | number | string[]

export interface Config {
  databaseUrl: string
  /** Most PostgreSQL connections one instance opens (`DATABASE_POOL_SIZE`). */
  databasePoolSize: number
  /**
   * Where PostgreSQL's LISTEN connections go (`DATABASE_LISTEN_URL`), straight to the server
   * when `DATABASE_URL` goes through a transaction pooler; null: `DATABASE_URL` itself.
   */
  databaseListenUrl: string | null
  port: number
  host: string
  /** Base URL clients reach the service at, for absolute links; null when not set. */
  publicUrl: string | null
  logLevel: string
  /** How long an authenticated API key is trusted without a lookup; 0 disables the cache. */
  authCacheSeconds: number
  plans: Plans
  /** How long a SQLite write waits for another process's lock before answering 503. */
  sqliteBusyTimeoutMs: number
  /** Open event streams per user (keyed) or client address (anonymous). */
  streamsPerClient: number
  /**
   * Most live streams the whole instance holds (`STREAMS_MAX`); null: set from the
   * file-descriptor limit at start (docs/operations.md#server-wide-stream-capacity).
   */
  streamsMax: number | null
  /** Anonymous requests per client address and minute. */
  anonRequestsPerMinute: number
  trustProxy: TrustProxy
  /** Who may sign up (`SIGNUP`): `invite` (through an invitation or the CLI) or `open`. */
  signup: 'invite' | 'open'
  /** The SMTP server e-mail goes through (`SMTP_URL`, e.g. `smtp://user:pass@host:587`); null: no e-mail. */
  smtpUrl: string | null
  /** The sender of statusd's e-mail (`MAIL_FROM`). */
  mailFrom: string
  /**
   * Private networks webhooks may reach (`WEBHOOK_ALLOW_NETWORKS`, CIDR ranges;
   * docs/notifications.md#outbound-safety); empty: none.
   */
  webhookAllowNetworks: string[]
  /** How often this instance looks for statuses that went stale (`STALE_CHECK_INTERVAL_MS`). */
  staleCheckIntervalMs: number
  /**
   * How often this instance reads the outbox for changes other instances committed
   * (`LIVE_RELAY_INTERVAL_MS`; PostgreSQL only).
   */
  liveRelayIntervalMs: number
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** A configuration mistake: reported to the operator in one line, and the process exits. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * A whole-number setting: decimal digits only, within [min, max]; `fallback` when the variable
 * is unset or empty. note: not Number() alone, which reads `0x10` as 16, `1e3` as 1000 and
 * blanks as 0 (for PORT, a random port).
 */
function wholeNumber(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  [min, max]: [number, number],
  what = 'an integer',
): number {
  const text = env[name]
  if (text === undefined || text === '') return fallback
  const n = Number(text)
  if (!/^\d{1,15}$/.test(text) || n < min || n > max)
    throw new ConfigError(`${name} must be ${what} from ${min} to ${max}, got "${text}"`)
  return n
}

/** Reads the environment into one validated Config (docs/operations.md#configuration). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // note: an empty variable means unset, as for the others
  const port = wholeNumber(env, 'PORT', 8080, [0, 65535])
  const poolSize = wholeNumber(env, 'DATABASE_POOL_SIZE', DEFAULT_POOL_SIZE, [1, 1000])
  const logLevel = env.LOG_LEVEL || 'info'
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`)
  let publicUrl: string | null = null
  if (env.PUBLIC_URL) {
    // note: paths are appended to it (Location, Link), so a scheme other than http(s), a
    // query or a fragment would make every link it builds wrong
    const url = URL.parse(env.PUBLIC_URL)
    if (!url || !['http:', 'https:'].includes(url.protocol) || /[?#]/.test(env.PUBLIC_URL))
      throw new ConfigError(
        `PUBLIC_URL must be an absolute http(s) URL without query or fragment, got "${env.PUBLIC_URL}"`,
      )
    publicUrl = url.href.replace(/\/$/, '')
  }
  const authCacheSeconds = wholeNumber(
    env,
    'AUTH_CACHE_SECONDS',
    5,
    [0, 3600],
    'a whole number of seconds',
  )
  const sqliteBusyTimeoutMs = wholeNumber(
    env,
    'SQLITE_BUSY_TIMEOUT_MS',
    DEFAULT_BUSY_TIMEOUT_MS,
    [0, 60_000],
  )
  const streamsPerClient = wholeNumber(
    env,
    'STREAMS_PER_CLIENT',
    DEFAULT_CLIENT_LIMITS.streamsPerClient,
    [1, 1_000_000],
  )
  const streamsMax =
    env.STREAMS_MAX === undefined || env.STREAMS_MAX === ''
      ? null
      : wholeNumber(env, 'STREAMS_MAX', 0, [1, 10_000_000])
  const anonRequestsPerMinute = wholeNumber(
    env,
    'ANON_REQUESTS_PER_MINUTE',
    DEFAULT_CLIENT_LIMITS.anonRequestsPerMinute,
    [1, 1_000_000_000],
  )
  const trustProxy = parseTrustProxy(env.TRUST_PROXY)
  const signup = env.SIGNUP || 'invite'
  if (signup !== 'invite' && signup !== 'open')
    throw new ConfigError(`SIGNUP must be invite or open, got "${signup}"`)
  let smtpUrl: string | null = null
  if (env.SMTP_URL) {
    const url = URL.parse(env.SMTP_URL)
    if (!url || !['smtp:', 'smtps:'].includes(url.protocol))
      // note: never echo the URL, it may carry the SMTP password
      throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL')
    smtpUrl = env.SMTP_URL
  }
  const mailFrom = env.MAIL_FROM || 'statusd <statusd@localhost>'
  const webhookAllowNetworks = (env.WEBHOOK_ALLOW_NETWORKS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  try {
    parseNetworks(webhookAllowNetworks.join(','))
  } catch (err) {
    throw new ConfigError(
      `WEBHOOK_ALLOW_NETWORKS must be a comma-separated list of CIDR ranges (10.0.0.0/8, fd00::/8): ${(err as Error).message}`,
    )
  }
  const staleCheckIntervalMs = wholeNumber(
    env,
    'STALE_CHECK_INTERVAL_MS',
    STALE_CHECK_INTERVAL_MS,
    [10, 3_600_000],
  )
  const liveRelayIntervalMs = wholeNumber(
    env,
    'LIVE_RELAY_INTERVAL_MS',
    LIVE_RELAY_INTERVAL_MS,
    [10, 60_000],
  )
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/statusd.db'
  checkDatabaseUrl(databaseUrl)
  const databaseListenUrl = env.DATABASE_LISTEN_URL || null
  const listenProblem =
    databaseListenUrl === null ? undefined : problemWithListenUrl(databaseListenUrl, databaseUrl)
  if (listenProblem !== undefined) throw new ConfigError(listenProblem)
  let plans = DEFAULT_PLANS
  if (env.PLANS_FILE) {
    try {
      plans = loadPlansFile(env.PLANS_FILE)
    } catch (err) {
      throw new ConfigError((err as Error).message)
    }
  }
  return {
    databaseUrl,
    databasePoolSize: poolSize,
    databaseListenUrl,
    port,
    host: env.HOST || '127.0.0.1',
    publicUrl,
    logLevel,
    authCacheSeconds,
    plans,
    sqliteBusyTimeoutMs,
    streamsPerClient,
    streamsMax,
    anonRequestsPerMinute,
    trustProxy,
    signup,
    smtpUrl,
    mailFrom,
    webhookAllowNetworks,
    staleCheckIntervalMs,
    liveRelayIntervalMs,
  }
}

// the names proxy-addr (Fastify's trustProxy) knows for the loopback and private ranges
const RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal']

/**
 * TRUST_PROXY (docs/operations.md#limits-per-client): unset, empty, `false` or `0` trusts no
 * proxy (the peer is the client); a whole number trusts that many hops; otherwise a comma-separated
 * list of proxy addresses and CIDR ranges. note: `true` (trust every hop) is refused: anyone
 * could then name any client and escape the per-client limits.
 */
function parseTrustProxy(text: string | undefined): TrustProxy {
  if (text === undefined || text === '' || text === 'false' || text === '0') return false
  if (/^\d{1,3}$/.test(text)) return Number(text)
  const entries = text.split(',').map((entry) => entry.trim())
  const valid = (entry: string) => {
    if (RANGE_NAMES.includes(entry)) return true
    const [address = '', prefix, ...more] = entry.split('/')
    const family = isIP(address)
    if (family === 0 || more.length > 0) return false
    if (prefix === undefined) return true
    return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)
  }
  if (!entries.every(valid))
    throw new ConfigError(
      `TRUST_PROXY must be a hop count or a comma-separated list of proxy addresses or CIDR ranges, got "${text}"`,
    )
  return entries
}

/** The storage URL's shape only; the engine reports what it cannot open. */
function checkDatabaseUrl(url: string): void {
  const problem = problemWithDatabaseUrl(url)
  if (problem !== undefined) throw new ConfigError(problem)
}
