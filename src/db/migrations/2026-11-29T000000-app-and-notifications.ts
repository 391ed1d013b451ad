import type { Kysely } from 'kysely'

// The app (docs/app.md) and notifications (docs/notifications.md).
// note: schema builder only; no engine-specific SQL, so SQLite and PostgreSQL share it.
//
// - statuses.palette: the value palette, JSON `[{value, colorNo}]` (null: none).
// - statuses.stale_after: seconds of silence after which the status reads stale (null: never);
//   stale_at: when the current silence turns stale (the last value write + stale_after, null
//   when stale_after is null), indexed so the stale detector reads only what is due;
//   stale_notified_at: when that silence was announced (null until then; a write clears it),
//   so each silence notifies once however many instances look.
// - boards: a named, shareable set of statuses (≤ 100, JSON `status_ids`, in display order).
// - channels: where a user is told (webhook, e-mail, browser push); `config` is JSON of the
//   type's settings, `secret` the Standard Webhooks signing secret (standard webhooks only).
// - notification_rules: one per user and status: `condition` JSON (`"any"`, `{"changesTo":
//   […]}`, `{"leaves": […]}`, `"stale"`), `channel_ids` JSON (null: all the user's channels).
// - outbox_events: what a committed change must notify, written in the change's transaction;
//   `id` is the stable event id receivers de-duplicate by; `done_at` set once it was fanned
//   out into deliveries.
// - deliveries: one event to one channel; `next_attempt_at` orders the retries; `locked_until`
//   is the lease of the instance attempting it, so with several instances one attempts it.
// - delivery_attempts: the log of attempts per channel (the API shows the last 100).
// - service_settings: values the service makes once and keeps (the VAPID key pair).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('statuses').addColumn('palette', 'text').execute()
  await db.schema.alterTable('statuses').addColumn('stale_after', 'integer').execute()
  await db.schema.alterTable('statuses').addColumn('stale_at', 'text').execute()
  await db.schema.alterTable('statuses').addColumn('stale_notified_at', 'text').execute()
  await db.schema.createIndex('statuses_stale_at').on('statuses').column('stale_at').execute()

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
  await db.schema.createIndex('boards_owner_id').on('boards').column('owner_id').execute()

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
  await db.schema.createIndex('channels_user_id').on('channels').column('user_id').execute()

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
  await db.schema
    .createIndex('notification_rules_user_id')
    .on('notification_rules')
    .column('user_id')
    .execute()

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
  await db.schema
    .createIndex('outbox_events_pending')
    .on('outbox_events')
    .columns(['done_at', 'created_at'])
    .execute()

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
  await db.schema
    .createIndex('deliveries_due')
    .on('deliveries')
    .columns(['state', 'next_attempt_at'])
    .execute()
  await db.schema
    .createIndex('deliveries_channel_id')
    .on('deliveries')
    .column('channel_id')
    .execute()

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
    .execute()
  await db.schema
    .createIndex('delivery_attempts_channel_at')
    .on('delivery_attempts')
    .columns(['channel_id', 'at'])
    .execute()

  await db.schema
    .createTable('service_settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'service_settings',
    'delivery_attempts',
    'deliveries',
    'outbox_events',
    'notification_rules',
    'channels',
    'boards',
  ])
    await db.schema.dropTable(table).execute()
  await db.schema.dropIndex('statuses_stale_at').execute()
  for (const column of ['stale_notified_at', 'stale_at', 'stale_after', 'palette'])
    await db.schema.alterTable('statuses').dropColumn(column).execute()
}
