import { DEFAULT_BUSY_TIMEOUT_MS, DEFAULT_POOL_SIZE } from './db/create-db.ts'
import { DEFAULT_PLANS, loadPlansFile, type Plans } from './modules/plans/plans.ts'

export interface Config {
  databaseUrl: string
  /** Most PostgreSQL connections one instance opens (`DATABASE_POOL_SIZE`). */
  databasePoolSize: number
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
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** A configuration mistake: reported to the operator in one line, and the process exits. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Reads the environment into one validated Config (SPEC §8). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // note: an empty variable means unset, as for the others; Number('') is 0, a random port
  const port = Number(env.PORT || '8080')
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${env.PORT}"`)
  const poolSize = Number(env.DATABASE_POOL_SIZE || DEFAULT_POOL_SIZE)
  if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1000)
    throw new ConfigError(
      `DATABASE_POOL_SIZE must be an integer from 1 to 1000, got "${env.DATABASE_POOL_SIZE}"`,
    )
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
  const authCacheSeconds = Number(env.AUTH_CACHE_SECONDS || '5')
  if (!/^\d+$/.test(env.AUTH_CACHE_SECONDS || '5') || authCacheSeconds > 3600)
    throw new ConfigError(
      `AUTH_CACHE_SECONDS must be a whole number of seconds from 0 to 3600, got "${env.AUTH_CACHE_SECONDS}"`,
    )
  const sqliteBusyTimeoutMs = Number(env.SQLITE_BUSY_TIMEOUT_MS || DEFAULT_BUSY_TIMEOUT_MS)
  if (
    !Number.isInteger(sqliteBusyTimeoutMs) ||
    sqliteBusyTimeoutMs < 0 ||
    sqliteBusyTimeoutMs > 60_000
  )
    throw new ConfigError(
      `SQLITE_BUSY_TIMEOUT_MS must be an integer from 0 to 60000, got "${env.SQLITE_BUSY_TIMEOUT_MS}"`,
    )
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/statusd.db'
  checkDatabaseUrl(databaseUrl)
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
    port,
    host: env.HOST || '127.0.0.1',
    publicUrl,
    logLevel,
    authCacheSeconds,
    plans,
    sqliteBusyTimeoutMs,
  }
}

/** The storage URL's shape only; the engine reports what it cannot open. */
function checkDatabaseUrl(url: string): void {
  if (url === 'sqlite:')
    throw new ConfigError('DATABASE_URL sqlite: needs a path, e.g. sqlite:./data/statusd.db')
  if (url.startsWith('sqlite:')) return
  if (/^postgres(ql)?:\/\//.test(url)) {
    // note: the URL is not echoed: it may hold a password
    if (!URL.canParse(url))
      throw new ConfigError(
        'DATABASE_URL is not a valid postgres:// URL (check its host and escaping)',
      )
    return
  }
  // note: only the scheme is echoed: the rest of a URL may hold a password
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0]
  throw new ConfigError(
    `DATABASE_URL must be sqlite:<path> or postgres://…, got ${scheme ? `a "${scheme}" URL` : 'no scheme'}`,
  )
}
