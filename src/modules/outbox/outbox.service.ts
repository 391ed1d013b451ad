import type { Insertable } from 'kysely'
import type { Db, OutboxEventsTable } from '../../db/database.ts'
import { newId } from '../../lib/ids.ts'
import {
  deleteDoneOutboxEvents,
  hasNotificationRule,
  insertOutboxEvent,
  insertOutboxEvents,
  listPendingOutboxEventsOf,
  markOutboxEventsDone,
  type OutboxEventRow,
  statusesWithNotificationRules,
  statusHasNotificationRule,
} from './outbox.repository.ts'

/** An outbox row to insert. */
export type OutboxEventInsert = Insertable<OutboxEventsTable> & { id: string }

/** A condition on a read of statuses: someone has a notification rule on the status (see recordStatusEvent). */
export const notificationRuleExists = hasNotificationRule

/** Of these statuses, the ones someone has a notification rule on (see recordStatusEvent). */
export const statusesNotified = (db: Db, statusIds: readonly string[]): Promise<Set<string>> =>
  statusesWithNotificationRules(db, statusIds)

/** Records events in `db` (the write's transaction), in one statement. */
export async function recordOutboxRows(db: Db, rows: readonly OutboxEventInsert[]): Promise<void> {
  await insertOutboxEvents(db, rows)
  // a recorded status event serves the live relay (see recordStatusEvent)
  if (rows.some((row) => row.type === STATUS_CHANGED)) statusEventsIn.add(db)
}

// The transactional outbox (docs/notifications.md#delivery): a write records what it must
// notify in its own transaction, so a crash after the commit loses nothing; the notifications
// worker fans recorded events out to channels afterwards. This module sits below statuses,
// which records events, and above nothing but the database.

export type { OutboxEventRow }

export interface NewOutboxEvent {
  /** `status.changed`, `status.stale`, `channel.test`, `channel.disabled`, … */
  type: string
  statusId?: string | null
  /** For a notice meant for one user (or one channel) only. */
  userId?: string | null
  channelId?: string | null
  /** What the event says (JSON-serialisable); the notifications worker reads it back. */
  payload: unknown
  /** When the change happened (RFC 3339). */
  at: string
}

/** The prefix of event ids: receivers see them as `webhook-id` and de-duplicate by them. */
export const EVENT_ID_PREFIX = 'evt_'

/** An event's row, with a new id that stays the same on every delivery attempt. */
export const outboxEventRow = (event: NewOutboxEvent): OutboxEventInsert => ({
  id: EVENT_ID_PREFIX + newId(),
  type: event.type,
  status_id: event.statusId ?? null,
  user_id: event.userId ?? null,
  channel_id: event.channelId ?? null,
  payload: JSON.stringify(event.payload),
  created_at: event.at,
  done_at: null,
})

/**
 * Records an event in `db` (pass the write's transaction); returns its id, which stays the
 * same on every delivery attempt.
 */
export async function recordOutboxEvent(db: Db, event: NewOutboxEvent): Promise<string> {
  const row = outboxEventRow(event)
  await insertOutboxEvent(db, row)
  return row.id
}

/**
 * The row of a value write's `status.changed` event (see recordStatusEvent); `by`: the user
 * the change was made for.
 */
export const statusChangedRow = (
  status: NotifiedStatus,
  at: string,
  by: string | null,
): OutboxEventInsert =>
  outboxEventRow({
    type: STATUS_CHANGED,
    statusId: status.id,
    payload: { status, at, by } satisfies StatusEventPayload,
    at,
  })

/** The Status as a notification carries it (docs/notifications.md#payloads). */
export interface NotifiedStatus {
  id: string
  shareId: string
  name: string
  value: string | null
  previousValue: string | null
  colorNo: number
  changeCount: number
  /** The status's share page. */
  url: string
}

/** What a status event (`status.changed`, `status.stale`) records as its payload. */
export interface StatusEventPayload {
  status: NotifiedStatus
  /** When it happened (RFC 3339): the value update, or the moment the status turned stale. */
  at: string
  /**
   * Who a change was made for (the writer's user; for a timed change, the user who set it),
   * so `byOthers` rules skip their own user's changes (docs/notifications.md#rules). Absent
   * on a silence; never sent to a channel.
   */
  by?: string | null
}

/** A value was set (every value update, the same value again included). */
export const STATUS_CHANGED = 'status.changed'
/** A status went quiet for its staleAfter (once per silence). */
export const STATUS_STALE = 'status.stale'

/**
 * Records a status event in `db` (the write's transaction): what the notifications worker
 * matches against the status's rules (docs/notifications.md#rules). Returns its id, or
 * undefined when none was recorded.
 *
 * A `status.changed` event is recorded only when the status has a notification rule at the
 * time of the write (docs/notifications.md#delivery): the worker matches events against the
 * rules, so an event on a status without one would reach nobody, and most statuses have none.
 * note: a `status.stale` event is always recorded: the detector is rare, off the write path,
 * and the relay of every instance relies on it (the detector records no `live.*` event).
 */
export const recordStatusEvent = async (
  db: Db,
  type: typeof STATUS_CHANGED | typeof STATUS_STALE,
  status: NotifiedStatus,
  at: string,
  by?: string | null,
): Promise<string | undefined> => {
  if (type === STATUS_CHANGED && !(await statusHasNotificationRule(db, status.id))) return undefined
  // note: only a recorded event serves the live relay; without one, announcedWrite records
  // the write's `live.status` event itself
  statusEventsIn.add(db)
  return recordOutboxEvent(db, {
    type,
    statusId: status.id,
    payload: { status, at, ...(by !== undefined && { by }) } satisfies StatusEventPayload,
    at,
  })
}

/** The transactions that recorded a status event (what recordLiveChange need not repeat). */
const statusEventsIn = new WeakSet<Db>()

/** True when `db` (a write's transaction) recorded a status event already. */
export const recordedStatusEventIn = (db: Db): boolean => statusEventsIn.has(db)

/**
 * What live streams must hear of besides the status events (value writes on a status with a
 * rule, silences): `live.status` (settings, a value write that recorded no status event),
 * `live.deleted`, `live.access` (who may see it).
 */
export const LIVE_CHANGE_TYPES = ['live.status', 'live.deleted', 'live.access'] as const

/**
 * Records a change for the live streams of every instance (docs/postgres.md#the-outbox-changes-no-notification-can-lose)
 * in `db` (the write's transaction). Done from the start: there is nothing to fan out, and it
 * goes with the fanned-out events after their retention.
 */
export async function recordLiveChange(db: Db, change: LiveChange, at: string): Promise<void> {
  await insertOutboxEvent(db, liveChangeRow(change, at))
}

type LiveChange = { statusId: string; kind: 'status' | 'deleted' | 'access'; version: number }

/** The row recordLiveChange records. */
export const liveChangeRow = (change: LiveChange, at: string): OutboxEventInsert => ({
  id: EVENT_ID_PREFIX + newId(),
  type: `live.${change.kind}`,
  status_id: change.statusId,
  user_id: null,
  channel_id: null,
  payload: JSON.stringify({ kind: change.kind, version: change.version }),
  created_at: at,
  done_at: at,
})

/**
 * Recorded events of these types not fanned out yet, oldest first, read with no lock: the
 * fan-out reads outside its writes, so writers never wait on it; a second instance reading
 * the same events makes nothing twice (deliveries are unique per event and channel).
 */
export const readPendingEvents = (
  db: Db,
  types: readonly string[],
  limit = 100,
): Promise<OutboxEventRow[]> => listPendingOutboxEventsOf(db, types, limit)

/** Marks events as fanned out; returns how many this call marked. */
export const markOutboxEventsFannedOut = (db: Db, ids: string[], at: string): Promise<number> =>
  markOutboxEventsDone(db, ids, at)

/** Deletes events fanned out before `before` (docs/notifications.md#delivery: retention). */
export const pruneOutboxEvents = (db: Db, before: string): Promise<number> =>
  deleteDoneOutboxEvents(db, before)
