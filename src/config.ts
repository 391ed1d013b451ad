import { DEFAULT_POOL_SIZE } from './db/create-db.ts'
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
  plans: Plans
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** A configuration mistake: reported to the operator in one line, and the process exits. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Reads the environment into one validated Config (SPEC §8). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? '8080')
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${env.PORT}"`)
  const poolSize = Number(env.DATABASE_POOL_SIZE || DEFAULT_POOL_SIZE)
  if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1000)
    throw new ConfigError(
      `DATABASE_POOL_SIZE must be an integer from 1 to 1000, got "${env.DATABASE_POOL_SIZE}"`,
    )
  const logLevel = env.LOG_LEVEL ?? 'info'
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`)
  let publicUrl: string | null = null
  if (env.PUBLIC_URL) {
    try {
      publicUrl = new URL(env.PUBLIC_URL).href.replace(/\/$/, '')
    } catch {
      throw new ConfigError(`PUBLIC_URL must be an absolute URL, got "${env.PUBLIC_URL}"`)
    }
  }
  let plans = DEFAULT_PLANS
  if (env.PLANS_FILE) {
    try {
      plans = loadPlansFile(env.PLANS_FILE)
    } catch (err) {
      throw new ConfigError((err as Error).message)
    }
  }
  return {
    databaseUrl: env.DATABASE_URL || 'sqlite:./data/statusd.db',
    databasePoolSize: poolSize,
    port,
    host: env.HOST || '127.0.0.1',
    publicUrl,
    logLevel,
    plans,
  }
}
