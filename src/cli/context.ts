import type { Kysely } from 'kysely'
import type { Config } from '../config.ts'
import { createDatabase } from '../db/create-database.ts'
import type { DB } from '../db/database.ts'
import type { Database } from '../db/engine.ts'
import { migrateToLatest } from '../db/migrate.ts'

/** Thrown for a wrong invocation: printed with the usage line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/**
 * Refuses what a command does not take, an option or an argument more, rather than ignoring
 * it (exit 2): `user list --plan pro` would otherwise list every user without a word.
 */
export function takesOnly(
  command: string,
  parsed: { values: Record<string, unknown>; positionals: string[] },
  options: readonly string[],
  positionals = 0,
): void {
  const option = Object.keys(parsed.values).find(
    (name) => name !== 'json' && !options.includes(name),
  )
  if (option !== undefined) throw new UsageError(`${command} does not take --${option}`)
  const extra = parsed.positionals[positionals]
  if (extra !== undefined) throw new UsageError(`${command} does not take "${extra}"`)
}

export interface Output {
  json: boolean
  out: (text: string) => void
}

/** Prints a result: JSON with --json, else the human-readable lines. */
export function print(output: Output, value: unknown, human: () => string): void {
  output.out(output.json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`)
}

/**
 * Opens the configured database for one admin command, then closes it. It is migrated
 * first unless `migrate: false` (the `migrate` command reports what it applies itself).
 */
export async function withDb<T>(
  config: Config,
  run: (db: Kysely<DB>, database: Database) => Promise<T>,
  { migrate = true } = {},
): Promise<T> {
  const database = createDatabase(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    busyTimeoutMs: config.sqliteBusyTimeoutMs,
  })
  try {
    if (migrate) await migrateToLatest(database.db)
    return await run(database.db, database)
  } finally {
    await database.close()
  }
}
