import { isIP } from 'node:net'
import { Ajv } from 'ajv'
import { type Static, Type } from 'typebox'
import { problemWithDatabaseUrl, problemWithListenUrl } from './db/database-url.ts'
import { DEFAULT_BUSY_TIMEOUT_MS, DEFAULT_POOL_SIZE } from './db/engine.ts'
import { DEFAULT_CLIENT_LIMITS } from './lib/client-limits.ts'
import { parseNetworks } from './lib/outbound.ts'
import { LIVE_RELAY_INTERVAL_MS } from './modules/events/live-relay.ts'
import type { MqttSettings } from './modules/mqtt/mqtt-bridge.ts'
import { DEFAULT_PLANS, loadPlansFile, type Plans } from './modules/plans/plans.ts'
import { STALE_CHECK_INTERVAL_MS } from './modules/statuses/staleness.ts'

/**
 * Which proxies' `X-Forwarded-For` names the client (`TRUST_PROXY`): none (false), the
 * nearest n hops, or the proxies at these addresses and CIDR ranges.
 */
export type TrustProxy = false | number | string[]

/**
 * The settings: each is the variable of the same name (`port`: `PORT`), as
 * docs/operations.md#configuration describes it.
 */
export interface Config {
  databaseUrl: string
  /** Most PostgreSQL connections one instance opens. */
  databasePoolSize: number
  /** Where PostgreSQL's LISTEN connections go; null: `databaseUrl`. */
  databaseListenUrl: string | null
  port: number
  host: string
  /** Base URL clients reach the service at, for absolute links; null when not set. */
  publicUrl: string | null
  logLevel: string
  /** How long an authenticated API key is trusted without a lookup; 0 disables the cache. */
  authCacheSeconds: number
  /** `PLANS_FILE`'s plans, or the built-in ones. */
  plans: Plans
  sqliteBusyTimeoutMs: number
  /** Open event streams per user (keyed) or client address (anonymous). */
  streamsPerClient: number
  /** Most live streams the whole instance holds; null: set from the descriptor limit at start. */
  streamsMax: number | null
  /** Anonymous requests per client address and minute. */
  anonRequestsPerMinute: number
  trustProxy: TrustProxy
  signup: 'invite' | 'open'
  /** The SMTP server e-mail goes through; null: no e-mail. */
  smtpUrl: string | null
  mailFrom: string
  /** Private networks webhooks may reach (docs/notifications.md#outbound-safety). */
  webhookAllowNetworks: string[]
  /** How often this instance looks for statuses that went stale. */
  staleCheckIntervalMs: number
  /** How often this instance reads the outbox for changes other instances committed. */
  liveRelayIntervalMs: number
  /** Where backups go (`statusd backup`, the schedule, the admin API); null: not set. */
  backupDir: string | null
  /** How often a backup is taken on a schedule (one instance at a time); null: never. */
  backupEveryMs: number | null
  /** How many backups the schedule keeps in `backupDir`; null: all. */
  backupKeep: number | null
  /** The MQTT bridge (docs/integrations.md#broker-settings); null: MQTT_URL is not set. */
  mqtt: MqttSettings | null
}

/** A configuration mistake: reported to the operator in one line, and the process exits. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** A whole number in [min, max]; `what` and the range make the error message. */
const Whole = (min: number, max: number, fallback?: number, what = 'an integer') =>
  Type.Integer({
    minimum: min,
    maximum: max,
    description: `${what} from ${min} to ${max}`,
    ...(fallback !== undefined && { default: fallback }),
  })

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/**
 * The variables (docs/operations.md#configuration). A `description` ends the message of a
 * mistake: "<NAME> must be <description>, got "<text>"" (`writeOnly`: never echo the text).
 */
const ENV = Type.Object({
  DATABASE_URL: Type.String({ default: 'sqlite:./data/statusd.db' }),
  DATABASE_POOL_SIZE: Whole(1, 1000, DEFAULT_POOL_SIZE),
  DATABASE_LISTEN_URL: Type.Optional(Type.String()),
  PORT: Whole(0, 65535, 8080),
  HOST: Type.String({ default: '127.0.0.1' }),
  // note: paths are appended to it (Location, Link), so a scheme other than http(s), a
  // query or a fragment would make every link it builds wrong
  PUBLIC_URL: Type.Optional(
    Type.String({
      format: 'url',
      pattern: '^https?://[^?#]*$',
      description: 'an absolute http(s) URL without query or fragment',
    }),
  ),
  LOG_LEVEL: Type.Enum(LOG_LEVELS, {
    default: 'info',
    description: `one of ${LOG_LEVELS.join(', ')}`,
  }),
  AUTH_CACHE_SECONDS: Whole(0, 3600, 5, 'a whole number of seconds'),
  PLANS_FILE: Type.Optional(Type.String()),
  SQLITE_BUSY_TIMEOUT_MS: Whole(0, 60_000, DEFAULT_BUSY_TIMEOUT_MS),
  STREAMS_PER_CLIENT: Whole(1, 1_000_000, DEFAULT_CLIENT_LIMITS.streamsPerClient),
  STREAMS_MAX: Type.Optional(Whole(1, 10_000_000)),
  ANON_REQUESTS_PER_MINUTE: Whole(1, 1_000_000_000, DEFAULT_CLIENT_LIMITS.anonRequestsPerMinute),
  TRUST_PROXY: Type.Optional(Type.String()),
  SIGNUP: Type.Enum(['invite', 'open'], { default: 'invite', description: 'invite or open' }),
  SMTP_URL: Type.Optional(
    Type.String({
      format: 'url',
      pattern: '^smtps?://',
      description: 'an smtp:// or smtps:// URL',
      // it may carry the SMTP password
      writeOnly: true,
    }),
  ),
  MAIL_FROM: Type.String({ default: 'statusd <statusd@localhost>' }),
  WEBHOOK_ALLOW_NETWORKS: Type.String({ default: '' }),
  STALE_CHECK_INTERVAL_MS: Whole(10, 3_600_000, STALE_CHECK_INTERVAL_MS),
  LIVE_RELAY_INTERVAL_MS: Whole(10, 60_000, LIVE_RELAY_INTERVAL_MS),
  BACKUP_DIR: Type.Optional(Type.String()),
  BACKUP_EVERY: Type.Optional(
    Type.String({
      pattern: '^[1-9][0-9]{0,5}[mhd]$',
      description: 'a number of minutes, hours or days, e.g. 30m, 24h or 7d',
    }),
  ),
  BACKUP_KEEP: Type.Optional(Whole(1, 100_000)),
  MQTT_URL: Type.Optional(
    Type.String({
      format: 'url',
      pattern: '^mqtts?://',
      description: 'an mqtt:// or mqtts:// URL',
      // it may carry the broker's password
      writeOnly: true,
    }),
  ),
  MQTT_API_KEY: Type.Optional(Type.String({ description: 'an API key', writeOnly: true })),
  MQTT_PROTOCOL: Type.Enum(['3.1.1', '5'], { default: '3.1.1', description: '3.1.1 or 5' }),
  // note: a topic level of the bridge: no wildcard, no slash, no NUL
  MQTT_PREFIX: Type.String({
    default: 'statusd',
    pattern: '^[^+#/\\u0000]{1,100}$',
    description: 'a topic level without +, #, or /',
  }),
  MQTT_DISCOVERY: Type.Optional(
    Type.String({
      pattern: '^[^+#/\\u0000]{1,100}$',
      description: 'a topic level without +, #, or / (empty: no discovery)',
    }),
  ),
})

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `24h` in milliseconds. */
const durationMs = (text: string): number =>
  Number(text.slice(0, -1)) * (UNIT_MS[text.slice(-1)] as number)
type VariableSchema = { type?: string; description?: string; writeOnly?: boolean }
const VARIABLES = ENV.properties as Record<string, VariableSchema>

/** The ConfigError for a variable the schema refuses. */
function mistake(name: string, text: string | undefined): ConfigError {
  const { description, writeOnly } = VARIABLES[name] ?? {}
  return new ConfigError(`${name} must be ${description}${writeOnly ? '' : `, got "${text}"`}`)
}

/** The variables, validated against ENV with its defaults filled in; an empty one is unset. */
function readEnv(env: NodeJS.ProcessEnv): Static<typeof ENV> {
  const vars = Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => !!entry[1] && entry[0] in VARIABLES,
    ),
  )
  // note: decimal digits only: Ajv's coercion, like Number(), reads `0x10` as 16, `1e3` as
  // 1000 and ` 80` as 80
  for (const [name, text] of Object.entries(vars))
    if (VARIABLES[name]?.type === 'integer' && !/^\d{1,15}$/.test(text)) throw mistake(name, text)
  // note: the schema is ours, so it is not checked against the meta-schema (as plans.ts)
  const validate = new Ajv({
    coerceTypes: true,
    useDefaults: true,
    validateSchema: false,
    formats: { url: (text: string) => URL.canParse(text) },
  }).compile<Static<typeof ENV>>(ENV)
  const texts = { ...vars }
  if (validate(vars)) return vars
  const name = validate.errors?.[0]?.instancePath.slice(1) ?? ''
  throw mistake(name, texts[name])
}

/** Reads the environment into one validated Config (docs/operations.md#configuration). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const vars = readEnv(env)
  const webhookAllowNetworks = vars.WEBHOOK_ALLOW_NETWORKS.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  try {
    parseNetworks(webhookAllowNetworks.join(','))
  } catch (err) {
    throw new ConfigError(
      `WEBHOOK_ALLOW_NETWORKS must be a comma-separated list of CIDR ranges (10.0.0.0/8, fd00::/8): ${(err as Error).message}`,
    )
  }
  const databaseUrl = vars.DATABASE_URL
  const databaseListenUrl = vars.DATABASE_LISTEN_URL ?? null
  const problem =
    problemWithDatabaseUrl(databaseUrl) ??
    (databaseListenUrl === null ? undefined : problemWithListenUrl(databaseListenUrl, databaseUrl))
  if (problem !== undefined) throw new ConfigError(problem)
  if (vars.MQTT_URL !== undefined && vars.MQTT_API_KEY === undefined)
    throw new ConfigError('MQTT_URL needs MQTT_API_KEY: the key the bridge acts as')
  if (vars.BACKUP_EVERY !== undefined && !vars.BACKUP_DIR)
    throw new ConfigError('BACKUP_EVERY needs BACKUP_DIR: the folder the backups go to')
  let plans = DEFAULT_PLANS
  if (vars.PLANS_FILE) {
    try {
      plans = loadPlansFile(vars.PLANS_FILE)
    } catch (err) {
      throw new ConfigError((err as Error).message)
    }
  }
  return {
    databaseUrl,
    databasePoolSize: vars.DATABASE_POOL_SIZE,
    databaseListenUrl,
    port: vars.PORT,
    host: vars.HOST,
    publicUrl: vars.PUBLIC_URL ? new URL(vars.PUBLIC_URL).href.replace(/\/$/, '') : null,
    logLevel: vars.LOG_LEVEL,
    authCacheSeconds: vars.AUTH_CACHE_SECONDS,
    plans,
    sqliteBusyTimeoutMs: vars.SQLITE_BUSY_TIMEOUT_MS,
    streamsPerClient: vars.STREAMS_PER_CLIENT,
    streamsMax: vars.STREAMS_MAX ?? null,
    anonRequestsPerMinute: vars.ANON_REQUESTS_PER_MINUTE,
    trustProxy: parseTrustProxy(vars.TRUST_PROXY),
    signup: vars.SIGNUP,
    smtpUrl: vars.SMTP_URL ?? null,
    mailFrom: vars.MAIL_FROM,
    webhookAllowNetworks,
    staleCheckIntervalMs: vars.STALE_CHECK_INTERVAL_MS,
    liveRelayIntervalMs: vars.LIVE_RELAY_INTERVAL_MS,
    backupDir: vars.BACKUP_DIR ?? null,
    backupEveryMs: vars.BACKUP_EVERY === undefined ? null : durationMs(vars.BACKUP_EVERY),
    backupKeep: vars.BACKUP_KEEP ?? null,
    mqtt:
      vars.MQTT_URL === undefined
        ? null
        : {
            url: vars.MQTT_URL,
            apiKey: vars.MQTT_API_KEY as string,
            prefix: vars.MQTT_PREFIX,
            protocolVersion: vars.MQTT_PROTOCOL === '5' ? 5 : 4,
            // set but empty is unset (readEnv): discovery off
            discovery: 'MQTT_DISCOVERY' in env ? (vars.MQTT_DISCOVERY ?? null) : 'homeassistant',
          },
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
