import type { Kysely } from 'kysely'

// Notification rules that skip the user's own changes (docs/notifications.md#rules):
// `by_others` 1 for a rule set with `byOthers: true`.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('notification_rules')
    .addColumn('by_others', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('notification_rules').dropColumn('by_others').execute()
}
