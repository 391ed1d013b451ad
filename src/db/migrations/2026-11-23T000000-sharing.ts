import type { Kysely } from 'kysely'

// note: schema builder only; no engine-specific SQL, so SQLite and PostgreSQL share it.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Granted roles (docs/sharing.md#roles); the owner is statuses.owner_id and never has a row here.
  await db.schema
    .createTable('status_roles')
    .addColumn('status_id', 'text', (c) =>
      c.notNull().references('statuses.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('status_roles_pk', ['status_id', 'user_id'])
    .execute()
  // GET /v1/user/subscriptions walks one user's roles in grant order
  await db.schema
    .createIndex('status_roles_user_created')
    .on('status_roles')
    .columns(['user_id', 'created_at', 'status_id'])
    .execute()

  // Every write to a status (value, setting, delete) moves its version by one: the id of its
  // Server-Sent Events. changeCount counts value updates only, so it cannot serve.
  await db.schema
    .alterTable('statuses')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('statuses').dropColumn('version').execute()
  await db.schema.dropTable('status_roles').execute()
}
