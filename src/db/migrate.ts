import { type Kysely, PostgresAdapter, sql } from 'kysely'
import { type MigrationResultSet, Migrator } from 'kysely/migration'
import type { DB } from './database.ts'
import { migrations } from './migrations/index.ts'

/**
 * On PostgreSQL, the schema statusd's tables live in (the first of `search_path`), so the
 * migrator keeps its own bookkeeping tables there too. Without it, Kysely would take another
 * schema's `kysely_migration` table (another app's, or another statusd's) for its own.
 */
async function migrationSchema(db: Kysely<DB>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(
    db,
  )
  return rows[0]?.schema ?? undefined
}

/** The migrator for this database, with every migration statusd knows. */
export async function migratorFor(db: Kysely<DB>): Promise<Migrator> {
  const schema = await migrationSchema(db)
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    ...(schema !== undefined && { migrationTableSchema: schema }),
  })
}

/**
 * Applies every pending migration; throws when one fails. Returns the names applied.
 * note: safe to run from several instances at once: on PostgreSQL Kysely holds an advisory
 * lock while it migrates, and whoever comes second finds nothing left to do.
 */
export async function migrateToLatest(db: Kysely<DB>): Promise<string[]> {
  const migrator = await migratorFor(db)
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** Names of migrations this code knows but the database has not applied yet. */
export async function pendingMigrations(db: Kysely<DB>): Promise<string[]> {
  const all = await (await migratorFor(db)).getMigrations()
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name)
}
