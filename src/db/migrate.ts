import type { Kysely } from 'kysely'
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration'
import type { DB } from './database.ts'
import { migrationSteps } from './engines.ts'
import { migrations } from './migrations/index.ts'

/** The migrator for this database, with every migration statusd knows (or `known`: tests). */
export async function migratorFor(
  db: Kysely<DB>,
  known: Record<string, Migration> = migrations,
): Promise<Migrator> {
  // note: where the engine has schemas, its bookkeeping tables go in the one statusd's
  // tables live in; otherwise Kysely would take another schema's `kysely_migration` table
  // (another app's, or another statusd's) for its own
  const schema = await migrationSteps(db).bookkeepingSchema(db as Kysely<unknown>)
  return new Migrator({
    db,
    provider: { getMigrations: async () => known },
    ...(schema !== undefined && { migrationTableSchema: schema }),
  })
}

/**
 * The database holds a migration this version does not know: a newer statusd migrated it (a
 * downgrade). Nothing is changed; the operator gets one line saying what to do.
 */
export class DatabaseTooNewError extends Error {
  override name = 'DatabaseTooNewError'
  readonly migration: string
  constructor(migration: string) {
    super(
      `the database was migrated by a newer statusd (migration ${migration} is unknown to this version): run that version, or restore the backup taken before the upgrade`,
    )
    this.migration = migration
  }
}

/**
 * Applies every pending migration; throws when one fails. Returns the names applied.
 * note: safe to run from several instances at once: where several can share a database,
 * Kysely holds a lock while it migrates, and whoever comes second finds nothing left to do.
 */
export async function migrateToLatest(db: Kysely<DB>): Promise<string[]> {
  const migrator = await migratorFor(db)
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest()
  const unknown = /previously executed migration (\S+) is missing/.exec(String(error))?.[1]
  if (unknown !== undefined) throw new DatabaseTooNewError(unknown)
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** Names of migrations this code knows but the database has not applied yet. */
export async function pendingMigrations(db: Kysely<DB>): Promise<string[]> {
  const all = await (await migratorFor(db)).getMigrations()
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name)
}
