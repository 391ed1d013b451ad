import type { Kysely } from 'kysely'

// Schedules (docs/api.md#schedules): a status's values set by cron entries in a time zone.

export async function up(db: Kysely<unknown>): Promise<void> {
  // one schedule a status. `entries` JSON `[{cron, value, colorNo?}]`; `set_by` the user whose
  // change a fire is; `next_fire_at` the next instant an entry fires (null: none ahead), which
  // the timed worker looks for
  await db.schema
    .createTable('status_schedules')
    .addColumn('status_id', 'text', (c) =>
      c.primaryKey().references('statuses.id').onDelete('cascade'),
    )
    .addColumn('set_by', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('entries', 'text', (c) => c.notNull())
    .addColumn('next_fire_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('status_schedules_next_fire_at')
    .on('status_schedules')
    .column('next_fire_at')
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('status_schedules').execute()
}
