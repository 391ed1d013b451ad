import type { Kysely } from 'kysely'
import type { Config } from '../config.ts'
import type { DB } from '../db/database.ts'
import type { Database } from '../db/engine.ts'

import type { Output } from './output.ts'

export { type Output, print, UsageError } from './output.ts'

/**
 * Opens the configured database for one admin command, then closes it. It is migrated
 * first unless `migrate: false` (the `migrate` command reports what it applies itself).
 */
export async function withDb<T>(
  config: Config,
  run: (db: Kysely<DB>, database: Database) => Promise<T>,
  { migrate = true } = {},
): Promise<T> {
  // note: the storage code loads when a command uses it, so that the client commands (and
  // --version) start without it (docs/cli.md)
  const { createDatabase } = await import('../db/create-database.ts')
  const { migrateToLatest } = await import('../db/migrate.ts')
  const database = createDatabase(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    ...(config.databaseListenUrl !== null && { listenUrl: config.databaseListenUrl }),
    busyTimeoutMs: config.sqliteBusyTimeoutMs,
  })
  try {
    if (migrate) await migrateToLatest(database.db)
    return await run(database.db, database)
  } finally {
    await database.close()
  }
}

/** What the admin commands get: where to print, and the configuration (read when used). */
export interface AdminContext {
  output: Output
  config: () => Promise<Config>
}
