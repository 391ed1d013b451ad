import type { Kysely } from 'kysely'
import { type MigrationResultSet, Migrator } from 'kysely/migration'
import type { DB } from './database.ts'
import { migrations } from './migrations/index.ts'

/** Applies every pending migration; throws when one fails. Returns the names applied. */
export async function migrateToLatest(db: Kysely<DB>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  })
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
