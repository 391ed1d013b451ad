import { type Kysely, sql } from 'kysely'

// Operators (docs/operations.md#operators): who may administer the instance, who may no
// longer sign in, and the security log each user and the operators read
// (docs/security.md#security-log).

export async function up(db: Kysely<unknown>): Promise<void> {
  // `admin`: 1 for an operator. `disabled_at`: when an operator disabled the account (null:
  // enabled); a disabled account's keys and sessions stop working at once
  await db.schema
    .alterTable('users')
    .addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.alterTable('users').addColumn('disabled_at', 'text').execute()
  // the first user is the first operator, on a database made before operators existed
  await sql`update users set admin = 1 where id = (
    select id from users order by created_at, id limit 1)`.execute(db)

  // what happened to an account: `user_id` the account concerned, `actor_id` who acted (the
  // user, an operator; null: someone not signed in), `detail` JSON. No foreign keys: an
  // operator's record of what they did outlives the account they did it to
  await db.schema
    .createTable('security_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('detail', 'text')
    .execute()
  await db.schema
    .createIndex('security_events_user_at')
    .on('security_events')
    .columns(['user_id', 'at'])
    .execute()
  await db.schema.createIndex('security_events_at').on('security_events').column('at').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('security_events').execute()
  await db.schema.alterTable('users').dropColumn('disabled_at').execute()
  await db.schema.alterTable('users').dropColumn('admin').execute()
}
