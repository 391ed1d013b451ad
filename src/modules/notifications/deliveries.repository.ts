import { type Insertable, type Selectable, sql, type Transaction } from 'kysely'
import type {
  ChannelsTable,
  DB,
  Db,
  DeliveriesTable,
  DeliveryAttemptsTable,
} from '../../db/database.ts'
import { claimRowsForUpdate } from '../../db/locks.ts'

// The delivery worker's rows (docs/notifications.md#delivery): rules and channels read for a
// fan-out, deliveries claimed, attempted and settled, and the delivery log.

type ChannelRow = Selectable<ChannelsTable>

/** Ids per `in (…)` list: well under SQLite's and PostgreSQL's bound on parameters. */
const CHUNK = 500

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** The channels of these users a notification may go to: enabled and confirmed. */
export async function usableChannelsOf(db: Db, userIds: readonly string[]): Promise<ChannelRow[]> {
  const rows: ChannelRow[] = []
  for (const part of chunks([...new Set(userIds)]))
    rows.push(
      ...(await db
        .selectFrom('channels')
        .selectAll()
        .where('user_id', 'in', part)
        .where('enabled', '=', 1)
        .where('verified_at', 'is not', null)
        .execute()),
    )
  return rows
}

/** A rule on a status joined with one channel its user may be told on (enabled, confirmed). */
export interface RuleChannelRow {
  status_id: string
  user_id: string
  condition: string
  channel_ids: string | null
  by_others: number
  channel_id: string
}

/**
 * The rules on these statuses whose users have a usable channel, one row per such channel,
 * by status and channel (two instances fanning out one event insert in the same order).
 * Rules of users with no channel cost the database an index probe each and never reach the
 * worker; statuses with no such rule return nothing.
 */
export async function ruleChannelsOfStatuses(
  db: Db,
  statusIds: readonly string[],
): Promise<RuleChannelRow[]> {
  const rows: RuleChannelRow[] = []
  for (const part of chunks([...new Set(statusIds)]))
    rows.push(
      ...(await db
        .selectFrom('notification_rules as r')
        .innerJoin('channels as c', 'c.user_id', 'r.user_id')
        .select([
          'r.status_id',
          'r.user_id',
          'r.condition',
          'r.channel_ids',
          'r.by_others',
          'c.id as channel_id',
        ])
        .where('r.status_id', 'in', part)
        .where('c.enabled', '=', 1)
        .where('c.verified_at', 'is not', null)
        .orderBy('r.status_id')
        .orderBy('c.id')
        .execute()),
    )
  return rows
}

export const channelById = (db: Db, id: string): Promise<ChannelRow | undefined> =>
  db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst()

/** Inserts deliveries; one that exists (same event and channel: a fan-out run again) is kept as it is. */
export async function insertDeliveries(
  db: Db,
  rows: readonly Insertable<DeliveriesTable>[],
): Promise<void> {
  // note: 9 columns a row, so a chunk stays far below the engines' parameter bounds
  for (const part of chunks(rows, 200))
    await db
      .insertInto('deliveries')
      .values(part)
      .onConflict((oc) => oc.columns(['event_id', 'channel_id']).doNothing())
      .execute()
}

/** True when a delivery is due and free to claim (a read: no lock taken). */
export async function anyDueDelivery(db: Db, now: string): Promise<boolean> {
  const row = await db
    .selectFrom('deliveries')
    .select('id')
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * Claims up to `limit` due deliveries for `leaseUntil`: pending, due, and not held by a live
 * lease. On PostgreSQL rows another instance is claiming are passed over (skip locked).
 */
export async function claimDueDeliveries(
  tx: Transaction<DB>,
  now: string,
  leaseUntil: string,
  limit: number,
): Promise<string[]> {
  const due = await claimRowsForUpdate(
    tx,
    tx
      .selectFrom('deliveries')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .orderBy('next_attempt_at')
      .limit(limit),
  ).execute()
  const ids = due.map((row) => row.id)
  if (ids.length > 0)
    await tx
      .updateTable('deliveries')
      .set({ locked_until: leaseUntil })
      .where('id', 'in', ids)
      .execute()
  return ids
}

/** A claimed delivery with what sending it needs: its channel and its event. */
export interface DeliveryWork {
  id: string
  event_id: string
  channel_id: string
  attempts: number
  created_at: string
  event_type: string | null
  event_payload: string | null
  channel: ChannelRow
  /** The channel owner's language (docs/languages.md): what its notices are written in. */
  locale: string | null
}

export async function loadDeliveries(db: Db, ids: readonly string[]): Promise<DeliveryWork[]> {
  if (ids.length === 0) return []
  const rows = await db
    .selectFrom('deliveries as d')
    .innerJoin('channels as c', 'c.id', 'd.channel_id')
    .leftJoin('outbox_events as e', 'e.id', 'd.event_id')
    .leftJoin('users as u', 'u.id', 'c.user_id')
    .select([
      'd.id as id',
      'd.event_id as event_id',
      'd.channel_id as channel_id',
      'd.attempts as attempts',
      'd.created_at as created_at',
      'e.type as event_type',
      'e.payload as event_payload',
      'u.locale as locale',
    ])
    .select((eb) => [
      'c.user_id',
      'c.type',
      'c.name',
      'c.config',
      'c.secret',
      'c.enabled',
      'c.verified_at',
      'c.failing_since',
      'c.disabled_reason',
      eb.ref('c.created_at').as('channel_created_at'),
      eb.ref('c.updated_at').as('channel_updated_at'),
    ])
    .where('d.id', 'in', [...ids])
    .execute()
  return rows.map((r) => ({
    id: r.id,
    event_id: r.event_id,
    channel_id: r.channel_id,
    attempts: Number(r.attempts),
    created_at: r.created_at,
    event_type: r.event_type,
    event_payload: r.event_payload,
    channel: {
      id: r.channel_id,
      user_id: r.user_id,
      type: r.type,
      name: r.name,
      config: r.config,
      secret: r.secret,
      enabled: Number(r.enabled),
      verified_at: r.verified_at,
      failing_since: r.failing_since,
      disabled_reason: r.disabled_reason,
      created_at: r.channel_created_at,
      updated_at: r.channel_updated_at,
    },
    locale: r.locale ?? null,
  }))
}

/** Inserts attempts into the delivery log, many per statement. */
export async function insertAttempts(
  db: Db,
  rows: readonly Insertable<DeliveryAttemptsTable>[],
): Promise<void> {
  // note: 9 columns a row, as deliveries
  for (const part of chunks(rows, 200))
    await db.insertInto('delivery_attempts').values(part).execute()
}

/** Settles deliveries as delivered at `at`, each now with `attempts` attempts. */
export async function markDelivered(
  db: Db,
  ids: readonly string[],
  at: string,
  attempts: number,
): Promise<void> {
  for (const part of chunks(ids))
    await db
      .updateTable('deliveries')
      .set({ state: 'delivered', attempts, locked_until: null, delivered_at: at })
      .where('id', 'in', part)
      .execute()
}

/** Lets deliveries claimed but not sent go (the worker stops): free to claim at once. */
export async function releaseDeliveries(db: Db, ids: readonly string[]): Promise<void> {
  for (const part of chunks(ids))
    await db
      .updateTable('deliveries')
      .set({ locked_until: null })
      .where('id', 'in', part)
      .where('state', '=', 'pending')
      .execute()
}

/** Settles a delivery: delivered or failed (given up), or pending again at `nextAttemptAt`. */
export async function settleDelivery(
  db: Db,
  id: string,
  outcome:
    | { state: 'delivered'; at: string; attempts: number }
    | { state: 'failed'; attempts: number }
    | { state: 'pending'; attempts: number; nextAttemptAt: string },
): Promise<void> {
  await db
    .updateTable('deliveries')
    .set({
      state: outcome.state,
      attempts: outcome.attempts,
      locked_until: null,
      ...(outcome.state === 'delivered' && { delivered_at: outcome.at }),
      ...(outcome.state === 'pending' && { next_attempt_at: outcome.nextAttemptAt }),
    })
    .where('id', '=', id)
    .execute()
}

/** Deliveries succeeded: these channels' failing streaks, if any, are over. */
export async function clearChannelsFailing(db: Db, channelIds: readonly string[]): Promise<void> {
  for (const part of chunks([...new Set(channelIds)]))
    await db
      .updateTable('channels')
      .set({ failing_since: null })
      .where('id', 'in', part)
      .where('failing_since', 'is not', null)
      .execute()
}

/** A delivery failed: the channel's failing streak begins now unless it runs already. */
export async function markChannelFailing(db: Db, channelId: string, at: string): Promise<void> {
  await db
    .updateTable('channels')
    .set({ failing_since: at })
    .where('id', '=', channelId)
    .where('failing_since', 'is', null)
    .execute()
}

/**
 * Disables the channel if it is enabled and failing since `failingBefore` or earlier; true
 * when this call disabled it (so one instance tells its owner, once).
 */
export async function disableFailingChannel(
  db: Db,
  channelId: string,
  failingBefore: string,
  reason: string,
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable('channels')
    .set({ enabled: 0, disabled_reason: reason, updated_at: at })
    .where('id', '=', channelId)
    .where('enabled', '=', 1)
    .where('failing_since', '<=', failingBefore)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Deletes each channel's attempts beyond its newest `keep`; returns how many went. */
export async function trimAttempts(db: Db, keep: number): Promise<number> {
  const result = await db
    .deleteFrom('delivery_attempts')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom(
          eb
            .selectFrom('delivery_attempts')
            .select([
              'id',
              sql<number>`row_number() over (partition by channel_id order by at desc, id desc)`.as(
                'n',
              ),
            ])
            .as('ranked'),
        )
        .select('ranked.id')
        .where('ranked.n', '>', keep),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Deletes settled deliveries (delivered or given up) made before `before`. */
export async function deleteSettledDeliveries(db: Db, before: string): Promise<number> {
  const result = await db
    .deleteFrom('deliveries')
    .where('state', 'in', ['delivered', 'failed'])
    .where('created_at', '<', before)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
