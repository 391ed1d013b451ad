import type { CreateTableBuilder, Kysely } from 'kysely'
import { migrationSteps } from '../engines.ts'

// statusd's first schema, written once with Kysely's schema builder for every
// engine. What differs by engine is the port's (MigrationSteps, engine.ts): which tables are
// stored in their primary key's order, and the tables and columns only the engine's own
// parts use. It replaced the pre-releases' migrations (migrate.ts, PRE_RELEASE_MIGRATIONS),
// whose end state it equals.
//
// Conventions: ids and timestamps are text (database.ts); a status's counters (`version`,
// `change_count`, `status_history.change_no`) are bigint, 64-bit on every engine, so a status
// never runs out of writes. Every token handed out (session, sign-in link, invitation link,
// share link) is stored only as its SHA-256 (`token_hash`): a copy of the database lets no
// one in.

/** Tables in an order where each comes after the tables it references. */
const TABLES = [
  'users',
  'api_keys',
  'statuses',
  'status_history',
  'status_roles',
  'status_deletions',
  'idempotency_keys',
  'sessions',
  'passkeys',
  'auth_tokens',
  'role_invitations',
  'invitation_links',
  'invitation_mails',
  'share_links',
  'boards',
  'channels',
  'notification_rules',
  'outbox_events',
  'deliveries',
  'delivery_attempts',
  'service_settings',
] as const

export async function up(db: Kysely<unknown>): Promise<void> {
  const steps = migrationSteps(db)
  /** The table stored in its primary key's order where the engine can (docs/decisions/0009-clustered-tables.md). */
  const keyOrdered = <T extends CreateTableBuilder<string, string>>(table: T): T =>
    steps.keyOrderedTable?.(table) ?? table
  const index = (name: string, table: string, columns: string[]) =>
    db.schema.createIndex(name).on(table).columns(columns).execute()

  // `email` keeps what the person typed; `email_key` is its folded form (users/email-address.ts
  // folds it, not SQL's lower(), which folds only ASCII on SQLite), unique: addresses compare
  // case-insensitively (docs/accounts.md)
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.unique())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('verified', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text')
    .addColumn('password_hash', 'text')
    .addColumn('email_verified_at', 'text')
    .execute()
  await db.schema
    .createIndex('users_email_folded')
    .on('users')
    .column('email_key')
    .unique()
    .execute()

  // `replaced_by`: the key a rotation replaced it with; a key is replaced once. `scopes` and
  // `status_ids` (JSON): null is every scope, every status
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
    .addColumn('replaced_by', 'text')
    .addColumn('scopes', 'text')
    .addColumn('status_ids', 'text')
    .execute()
  await index('api_keys_user_id', 'api_keys', ['user_id'])

  // Stored by id where the engine can: a status found by its id (every write reads one) is
  // one search of the table. Every write moves `version` by one (the id of its Server-Sent
  // Events); `change_count` counts value updates only. `name_search`: the name folded for
  // search (statuses.service.ts searchableName). `palette`: JSON `[{value, colorNo}]`.
  // `stale_after`: seconds of silence after which the status reads stale; `stale_at`: when
  // the current silence turns stale; `stale_notified_at`: when it was announced, so that each
  // silence notifies once however many instances look.
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
    .addColumn('change_count', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('value_updated_at', 'text')
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(1))
    .addColumn('listed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('name_search', 'text')
    .addColumn('palette', 'text')
    .addColumn('stale_after', 'integer')
    .addColumn('stale_at', 'text')
    .addColumn('stale_notified_at', 'text')
    // NULL keys never collide, so keyless statuses are unconstrained (both engines agree)
    .addUniqueConstraint('statuses_owner_key', ['owner_id', 'status_key'])
    .$call(keyOrdered)
    .execute()
  // An owner's list page, in creation order. Where statuses is stored by id, one owner's
  // statuses no longer sit together: the index also carries the columns a list page shows,
  // so that a page is read from the index alone.
  await index('statuses_owner_created', 'statuses', [
    'owner_id',
    'created_at',
    'id',
    ...(steps.keyOrderedTable ? ['status_key', 'share_id', 'name'] : []),
  ])
  // search reads only listed statuses, and tests their names in the index itself
  await index('statuses_listed', 'statuses', [
    'listed',
    'access_type',
    'created_at',
    'id',
    'name_search',
  ])
  // the stale detector reads only what is due
  await index('statuses_stale_at', 'statuses', ['stale_at'])

  // Stored in (status_id, change_no) order where the engine can: a history page reads a few
  // pages. No reference to statuses: a deleted status's history goes in batches after the
  // delete (status_deletions, docs/operations.md#history-sweep), not in a cascade within it.
  // `by_key_id`: the API key a value was written with (null: a session or the CLI).
  await db.schema
    .createTable('status_history')
    .addColumn('status_id', 'text', (c) => c.notNull())
    .addColumn('change_no', 'bigint', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('by_user_id', 'text', (c) => c.notNull())
    .addColumn('by_key_id', 'text')
    .addPrimaryKeyConstraint('status_history_pk', ['status_id', 'change_no'])
    .$call(keyOrdered)
    .execute()

  // Granted roles (docs/sharing.md#roles); the owner is statuses.owner_id and has no row here
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
  // a user's subscriptions, in grant order
  await index('status_roles_user_created', 'status_roles', ['user_id', 'created_at', 'status_id'])

  // a deleted status whose history the sweep has yet to remove (written in the delete's
  // transaction, deleted with the last batch)
  await db.schema
    .createTable('status_deletions')
    .addColumn('status_id', 'text', (c) => c.primaryKey())
    .addColumn('deleted_at', 'text', (c) => c.notNull())
    .execute()

  // Stored responses of POST/PATCH requests sent with an Idempotency-Key
  // (docs/api.md#safe-retries-idempotency-key). `fingerprint`: sha256 of method, path and
  // canonical body, so that a reuse with anything else is refused; `etag`: the ETag the
  // first answer had, replayed with it.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('location', 'text')
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('etag', 'text')
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['user_id', 'key'])
    .execute()
  await index('idempotency_keys_created', 'idempotency_keys', ['created_at'])

  // People (docs/accounts.md): sessions, passkeys, one-time tokens, invitations with consent,
  // invitation links, private share links
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
  await index('sessions_user_id', 'sessions', ['user_id'])

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
  await index('passkeys_user_id', 'passkeys', ['user_id'])

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
  await index('auth_tokens_user_id', 'auth_tokens', ['user_id'])

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
  await index('role_invitations_user_id', 'role_invitations', ['user_id'])

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
  await index('invitation_links_status_id', 'invitation_links', ['status_id'])

  // Invitation mails sent (docs/accounts.md#invitation-links): one row per message, so that
  // the limits per address and per inviter hold across every instance and outlive the link
  // or status that caused the message. Rows older than a day are pruned as new ones come.
  await db.schema
    .createTable('invitation_mails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('to_key', 'text', (c) => c.notNull())
    .addColumn('sender_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await index('invitation_mails_to_key', 'invitation_mails', ['to_key', 'created_at'])
  await index('invitation_mails_sender_id', 'invitation_mails', ['sender_id', 'created_at'])
  await index('invitation_mails_created_at', 'invitation_mails', ['created_at'])

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
  await index('share_links_status_id', 'share_links', ['status_id'])

  // The app (docs/app.md): a named, shareable set of statuses (JSON `status_ids`, in display
  // order)
  await db.schema
    .createTable('boards')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('share_id', 'text', (c) => c.notNull().unique())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('access_type', 'text', (c) => c.notNull())
    .addColumn('status_ids', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(1))
    .execute()
  await index('boards_owner_id', 'boards', ['owner_id'])

  // Notifications (docs/notifications.md). channels: where a user is told; `config` is JSON
  // of the type's settings, `secret` the Standard Webhooks signing secret.
  await db.schema
    .createTable('channels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('secret', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('verified_at', 'text')
    .addColumn('failing_since', 'text')
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await index('channels_user_id', 'channels', ['user_id'])

  // one per user and status: `condition` JSON, `channel_ids` JSON (null: all the user's
  // channels)
  await db.schema
    .createTable('notification_rules')
    .addColumn('status_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('condition', 'text', (c) => c.notNull())
    .addColumn('channel_ids', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_rules_pk', ['status_id', 'user_id'])
    .execute()
  await index('notification_rules_user_id', 'notification_rules', ['user_id'])

  // What a committed change must notify, written in the change's transaction; `id` is the
  // event id receivers de-duplicate by; `done_at` set once fanned out into deliveries. The
  // engine adds what its own parts need (`tx_id`, below).
  await db.schema
    .createTable('outbox_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status_id', 'text')
    .addColumn('user_id', 'text')
    .addColumn('channel_id', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('done_at', 'text')
    .execute()
  await index('outbox_events_pending', 'outbox_events', ['done_at', 'created_at'])

  // one event to one channel; `next_attempt_at` orders the retries; `locked_until` is the
  // lease of the instance attempting it
  await db.schema
    .createTable('deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) =>
      c.notNull().references('channels.id').onDelete('cascade'),
    )
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .addUniqueConstraint('deliveries_event_channel', ['event_id', 'channel_id'])
    .execute()
  await index('deliveries_due', 'deliveries', ['state', 'next_attempt_at'])
  await index('deliveries_channel_id', 'deliveries', ['channel_id'])

  // the log of attempts per channel; `event_type` keeps it readable after the event is trimmed
  await db.schema
    .createTable('delivery_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) =>
      c.notNull().references('channels.id').onDelete('cascade'),
    )
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('event_type', 'text')
    .execute()
  await index('delivery_attempts_channel_at', 'delivery_attempts', ['channel_id', 'at'])

  // values the service makes once and keeps (the VAPID key pair)
  await db.schema
    .createTable('service_settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()

  await steps.engineSchema(db, 'up')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await migrationSteps(db).engineSchema(db, 'down')
  for (const table of [...TABLES].reverse()) await db.schema.dropTable(table).execute()
}
