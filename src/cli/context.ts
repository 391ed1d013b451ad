import type { Kysely } from 'kysely'
import type { Config } from '../config.ts'
import { createDatabase } from '../db/create-db.ts'
import type { DB } from '../db/database.ts'
import { migrateToLatest } from '../db/migrate.ts'

/** Thrown for a wrong invocation: printed with the usage line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

export interface Output {
  json: boolean
  out: (text: string) => void
}

/** Prints a result: JSON with --json, else the human-readable lines. */
export function print(output: Output, value: unknown, human: () => string): void {
  output.out(output.json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`)
}

/** Opens (and migrates) the configured database for one admin command, then closes it. */
export async function withDb<T>(config: Config, run: (db: Kysely<DB>) => Promise<T>): Promise<T> {
  const database = createDatabase(config.databaseUrl, { busyTimeoutMs: config.sqliteBusyTimeoutMs })
  try {
    await migrateToLatest(database.db)
    return await run(database.db)
  } finally {
    await database.close()
  }
}
