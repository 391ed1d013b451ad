import type { Kysely } from 'kysely'
import {
  DEFAULT_MIGRATION_TABLE,
  type Migration,
  type MigrationResultSet,
  Migrator,
} from 'kysely/migration'
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

/**
 * The migrations of statusd's pre-releases, squashed into the initial migration before the
 * first release: a database that applied every one of them has its schema, table for table.
 */
export const PRE_RELEASE_MIGRATIONS: readonly string[] = [
  '2026-11-22T000000-initial',
  '2026-11-22T010000-idempotency-keys',
  '2026-11-23T000000-sharing',
  '2026-11-24T000000-clustered-history',
  '2026-11-24T010000-clustered-statuses',
  '2026-11-25T000000-api-key-successor',
  '2026-11-25T010000-bigint-counters',
  '2026-11-26T000000-idempotent-etag',
  '2026-11-27T000000-history-sweep',
  '2026-11-28T000000-people',
  '2026-11-28T050000-share-links-search',
  '2026-11-29T000000-app-and-notifications',
  '2026-11-29T010000-delivery-log',
  '2026-11-30T000000-outbox-commit-order',
  '2026-11-30T010000-rate-limit-counters',
  '2026-12-01T000000-invitation-mails',
  '2026-12-01T030000-history-key',
]

/** The first migration, whose schema the pre-releases' migrations end in. */
const INITIAL = Object.keys(migrations).sort()[0] as string

/**
 * A pre-release of statusd made the database and stopped before the end of its migrations:
 * its schema is none this version knows. Nothing is changed; the operator gets one line.
 */
export class PreReleaseDatabaseError extends Error {
  override name = 'PreReleaseDatabaseError'
  constructor(missing: string) {
    super(
      `the database was made by a pre-release of statusd that did not finish its migrations (${missing} was never applied): start that pre-release once more so that it finishes them, or start on a new database`,
    )
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
  let { error, results }: MigrationResultSet = await migrator.migrateToLatest()
  let unknown = unknownMigration(error)
  // a pre-release's database: recorded as migrated by the initial migration, which it then
  // counts as applied
  const adopted = unknown !== undefined && PRE_RELEASE_MIGRATIONS.includes(unknown)
  if (adopted) {
    await adoptPreRelease(db)
    ;({ error, results } = await migrator.migrateToLatest())
    unknown = unknownMigration(error)
  }
  // note: thrown inside the transaction, so that nothing of a failed run commits
  if (unknown !== undefined) throw new DatabaseTooNewError(unknown)
  if (error) throw error instanceof Error ? error : new Error(String(error))
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
  return adopted ? [INITIAL, ...applied] : applied
}

/** The migration the database applied that this version does not know, from the migrator's error. */
const unknownMigration = (error: unknown): string | undefined =>
  /previously executed migration (\S+) is missing/.exec(String(error))?.[1]

/**
 * A database a pre-release migrated to its end (every one of PRE_RELEASE_MIGRATIONS) has the
 * initial migration's schema: its bookkeeping now says so, in one transaction, and nothing
 * else changes (docs/operations.md#migrations). One that stopped part way is refused.
 */
async function adoptPreRelease(db: Kysely<DB>): Promise<void> {
  const executed = new Set(await executedMigrations(db))
  const missing = PRE_RELEASE_MIGRATIONS.find((name) => !executed.has(name))
  if (missing !== undefined) throw new PreReleaseDatabaseError(missing)
  const adopt = async (tx: Kysely<DB>) => {
    const table = await bookkeeping(tx)
    await table
      .deleteFrom(DEFAULT_MIGRATION_TABLE)
      .where('name', 'in', PRE_RELEASE_MIGRATIONS)
      .execute()
    await table
      .insertInto(DEFAULT_MIGRATION_TABLE)
      .values({ name: INITIAL, timestamp: new Date().toISOString() })
      .execute()
  }
  // note: on PostgreSQL migrateToLatest runs all of it in its transaction already
  if (db.isTransaction) await adopt(db)
  else await db.transaction().execute(adopt)
}

/** The migrator's own table, in the schema it keeps it in. */
async function bookkeeping(db: Kysely<DB>) {
  const schema = await migrationSteps(db).bookkeepingSchema(db as Kysely<unknown>)
  const loose = db as unknown as Kysely<Record<string, { name: string; timestamp: string }>>
  return schema === undefined ? loose : loose.withSchema(schema)
}

/** Every migration the database records as applied, known to this version or not. */
export async function executedMigrations(db: Kysely<DB>): Promise<string[]> {
  const schema = await migrationSteps(db).bookkeepingSchema(db as Kysely<unknown>)
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  const exists = tables.some(
    (t) => t.name === DEFAULT_MIGRATION_TABLE && (schema === undefined || t.schema === schema),
  )
  if (!exists) return []
  const rows = await (await bookkeeping(db))
    .selectFrom(DEFAULT_MIGRATION_TABLE)
    .select('name')
    .orderBy('name')
    .execute()
  return rows.map((r) => r.name)
}

/** Names of migrations this code knows but the database has not applied yet. */
export async function pendingMigrations(db: Kysely<DB>): Promise<string[]> {
  const all = await (await migratorFor(db)).getMigrations()
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name)
}
