import type { Kysely } from 'kysely'
import { type Migration, type MigrationResultSet, Migrator } from 'kysely/migration'
import type { DB } from './database.ts'
import { migrationSteps } from './engines.ts'
import { lockForTransaction } from './locks.ts'
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

/** The advisory lock migrations take turns on (Engine.advisoryLock). */
const MIGRATION_LOCK = 'statusd:migrate'

/**
 * Applies every pending migration; throws when one fails. Returns the names applied.
 * note: safe to run from several instances at once. Where the engine has transactional DDL
 * (PostgreSQL), all of it runs in one transaction that first takes a transaction-scoped
 * advisory lock: whoever comes second waits, then finds nothing left to do, and a failed
 * migration leaves the schema as it was. Not Kysely's own migration lock, which is
 * session-scoped: behind a transaction-pooling PgBouncer its lock and unlock can land on two
 * server connections, leaving the lock held by one no client owns, and the next start would
 * wait for it (docs/postgres.md#behind-pgbouncer). Its lock is still taken, inside this
 * transaction, on one connection: harmless.
 */
export async function migrateToLatest(db: Kysely<DB>): Promise<string[]> {
  if (!db.getExecutor().adapter.supportsTransactionalDdl) return migrate(db)
  return db.transaction().execute(async (tx) => {
    await lockForTransaction(tx, MIGRATION_LOCK)
    return migrate(tx)
  })
}

async function migrate(db: Kysely<DB>): Promise<string[]> {
  const migrator = await migratorFor(db)
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest()
  const unknown = /previously executed migration (\S+) is missing/.exec(String(error))?.[1]
  // note: thrown inside the transaction, so that nothing of a failed run commits
  if (unknown !== undefined) throw new DatabaseTooNewError(unknown)
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** Names of migrations this code knows but the database has not applied yet. */
export async function pendingMigrations(db: Kysely<DB>): Promise<string[]> {
  const all = await (await migratorFor(db)).getMigrations()
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name)
}
