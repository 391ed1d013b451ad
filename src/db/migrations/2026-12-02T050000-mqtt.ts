import type { Kysely } from 'kysely'

// Leases (docs/integrations.md#one-bridge-across-instances): work that one instance at a time
// does, such as the MQTT bridge. The holder renews its row before `expires_at`; another
// instance takes a row whose time has passed.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('leases').execute()
}
