import { type Kysely, sql } from 'kysely'

// People (docs/accounts.md): passwords, sessions, passkeys, one-time tokens, invitations with
// consent, invitation links, private share links, scoped keys and listed statuses.
// note: schema builder only; no engine-specific SQL, so SQLite and PostgreSQL share it.
//
// Every token handed out (session, sign-in link, invitation link, share link) is stored only
// as its SHA-256 (`token_hash`): a copy of the database lets no one in.
export async function up(db: Kysely<unknown>): Promise<void> {
  // e-mail addresses compare case-insensitively: `email_key` is the folded form, unique;
  // `email` keeps what the person typed. note: a case-variant duplicate made before this
  // version keeps its address but no key (the older user keeps the address's key).
  await db.schema.alterTable('users').addColumn('email_key', 'text').execute()
  await db.schema.alterTable('users').addColumn('password_hash', 'text').execute()
  await db.schema.alterTable('users').addColumn('email_verified_at', 'text').execute()
  // note: folded here as users/email-address.ts folds (toLowerCase), not by SQL's lower(),
  // which folds only ASCII on SQLite: a key the service would never look up
  const { rows } = await sql<{ id: string; email: string }>`select id, email from users
    where email is not null order by created_at, id`.execute(db)
  const taken = new Set<string>()
  for (const { id, email } of rows) {
    const key = email.toLowerCase()
    if (taken.has(key)) continue
    taken.add(key)
    await sql`update users set email_key = ${key} where id = ${id}`.execute(db)
  }
  await db.schema
    .createIndex('users_email_folded')
    .on('users')
    .column('email_key')
    .unique()
    .execute()

  // null: every scope / every status (keys made before scopes existed keep all their rights)
  await db.schema.alterTable('api_keys').addColumn('scopes', 'text').execute()
  await db.schema.alterTable('api_keys').addColumn('status_ids', 'text').execute()

  await db.schema
    .alterTable('statuses')
    .addColumn('listed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('ip', 'text')
    .addColumn('method', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute()

  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull())
    .addColumn('transports', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute()
  await db.schema.createIndex('passkeys_user_id').on('passkeys').column('user_id').execute()

  // one-time tokens: sign-in links, e-mail verification, password reset, passkey challenges
  await db.schema
    .createTable('auth_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('data', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute()
  await db.schema.createIndex('auth_tokens_user_id').on('auth_tokens').column('user_id').execute()

  // a role offered to a user, waiting for their consent
  await db.schema
    .createTable('role_invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('status_id', 'text', (c) =>
      c.notNull().references('statuses.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('role_invitations_status_user', ['status_id', 'user_id'])
    .execute()
  await db.schema
    .createIndex('role_invitations_user_id')
    .on('role_invitations')
    .column('user_id')
    .execute()

  await db.schema
    .createTable('invitation_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('status_id', 'text', (c) =>
      c.notNull().references('statuses.id').onDelete('cascade'),
    )
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text')
    .addColumn('max_uses', 'integer', (c) => c.notNull())
    .addColumn('uses_left', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute()
  await db.schema
    .createIndex('invitation_links_status_id')
    .on('invitation_links')
    .column('status_id')
    .execute()

  await db.schema
    .createTable('share_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('status_id', 'text', (c) =>
      c.notNull().references('statuses.id').onDelete('cascade'),
    )
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute()
  await db.schema
    .createIndex('share_links_status_id')
    .on('share_links')
    .column('status_id')
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'share_links',
    'invitation_links',
    'role_invitations',
    'auth_tokens',
    'passkeys',
    'sessions',
  ])
    await db.schema.dropTable(table).execute()
  await db.schema.alterTable('statuses').dropColumn('listed').execute()
  await db.schema.alterTable('api_keys').dropColumn('status_ids').execute()
  await db.schema.alterTable('api_keys').dropColumn('scopes').execute()
  await db.schema.dropIndex('users_email_folded').execute()
  await db.schema.alterTable('users').dropColumn('email_verified_at').execute()
  await db.schema.alterTable('users').dropColumn('password_hash').execute()
  await db.schema.alterTable('users').dropColumn('email_key').execute()
}
