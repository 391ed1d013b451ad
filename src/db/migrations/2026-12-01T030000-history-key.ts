import type { Kysely } from 'kysely'

// Which API key wrote each value (docs/api.md#sharing-history-and-live-updates): a history
// entry names its user, and now also the key a device or script wrote with, so that the
// owner tells the door sensor's writes from their own. Null for a write made with a session
// or the CLI, and for every entry written before this version.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('status_history').addColumn('by_key_id', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('status_history').dropColumn('by_key_id').execute()
}
