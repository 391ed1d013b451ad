import type { Kysely } from 'kysely'

// note: schema builder only; no engine-specific SQL, so SQLite and PostgreSQL share it.
// A rotated key names the key that replaced it. A key is replaced once: a rotation that finds
// the column set (a race, or a second rotation during the grace period) is refused, so two
// rotations of one key never leave two successors.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('replaced_by', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('replaced_by').execute()
}
