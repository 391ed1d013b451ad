import type { Kysely } from 'kysely'

// note: schema builder only; no engine-specific SQL, so SQLite and PostgreSQL share it.
// A replayed response carries the ETag its first answer had. The ETag names the status's
// version then, which the stored body does not hold, so it is stored beside it; records
// stored before this column replay without one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('etag', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('etag').execute()
}
