import type { Kysely } from 'kysely'

// note: schema builder only; no engine-specific SQL, so SQLite and PostgreSQL share it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.unique())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('verified', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('label', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute()
  await db.schema.createIndex('api_keys_user_id').on('api_keys').column('user_id').execute()

  await db.schema
    .createTable('statuses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('share_id', 'text', (c) => c.notNull().unique())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('status_key', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('value', 'text')
    .addColumn('access_type', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('color_no', 'integer', (c) => c.notNull())
    .addColumn('access_type_user_list', 'text', (c) => c.notNull())
    .addColumn('access_type_history', 'text', (c) => c.notNull())
    .addColumn('change_count', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('value_updated_at', 'text')
    // NULL keys never collide, so keyless statuses are unconstrained (both engines agree)
    .addUniqueConstraint('statuses_owner_key', ['owner_id', 'status_key'])
    .execute()
  await db.schema
    .createIndex('statuses_owner_created')
    .on('statuses')
    .columns(['owner_id', 'created_at', 'id'])
    .execute()

  await db.schema
    .createTable('status_history')
    .addColumn('status_id', 'text', (c) =>
      c.notNull().references('statuses.id').onDelete('cascade'),
    )
    .addColumn('change_no', 'integer', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('by_user_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('status_history_pk', ['status_id', 'change_no'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['status_history', 'statuses', 'api_keys', 'users'])
    await db.schema.dropTable(table).execute()
}
