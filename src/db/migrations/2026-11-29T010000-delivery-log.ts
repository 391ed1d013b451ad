import type { Kysely } from 'kysely'

// The delivery log (docs/notifications.md#delivery): each attempt names the type of the event
// it carried, so a channel's log reads whole even after the event itself was trimmed.
// Null only for attempts logged before this version (there were none: the log came with it).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('delivery_attempts').addColumn('event_type', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('delivery_attempts').dropColumn('event_type').execute()
}
