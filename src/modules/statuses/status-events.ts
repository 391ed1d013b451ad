import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/database.ts'
import { type Writer, writerOf } from '../../db/writer.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import type { EventBus } from '../../lib/event-bus.ts'
import { recordedStatusEventIn, recordLiveChange } from '../outbox/outbox.service.ts'

/**
 * A committed write to a status, as the event bus carries it. Deliberately small (no status
 * body): it must fit a notification between instances, and every instance reads the current
 * row itself once per change, however many clients it serves.
 */
export interface StatusChange {
  statusId: string
  /** The status's version after the write (`statuses.version`); the event id clients see. */
  version: number
  /**
   * `status`: a value or setting changed (or the status was created). `deleted`: the status
   * is gone. `access`: who may see it changed (a role revoked); streams re-check visibility.
   */
  kind: 'status' | 'deleted' | 'access'
}

/** The bus status changes travel on; topics are status ids. */
export type StatusEventBus = EventBus<StatusChange>

const KINDS = new Set<StatusChange['kind']>(['status', 'deleted', 'access'])

/** A change back from its JSON text (what another instance sent); undefined for anything else. */
export function parseStatusChange(text: string | undefined): StatusChange | undefined {
  if (!text) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  const v = value as Partial<StatusChange> | null
  if (
    !v ||
    typeof v !== 'object' ||
    typeof v.statusId !== 'string' ||
    !Number.isSafeInteger(v.version) ||
    !KINDS.has(v.kind as StatusChange['kind'])
  )
    return undefined
  return {
    statusId: v.statusId,
    version: v.version as number,
    kind: v.kind as StatusChange['kind'],
  }
}

/** How status changes travel on a bus: by status, and as JSON between instances. */
export const STATUS_CHANGES = {
  topicOf: (change: StatusChange): string => change.statusId,
  parse: parseStatusChange,
}

/**
 * Runs a write and announces the change it made (`changeOf` its result; null when it made
 * none to announce) right after the commit (never before: streams would read the old row).
 * Where the bus can lose a change (`relayedByOutbox`: between instances), the write also
 * records it in the outbox inside its transaction.
 */
export async function announcedWrite<T>(
  deps: {
    db: Kysely<DB>
    writer?: Writer
    events?: StatusEventBus | undefined
    clock?: Clock
    committed?: ((change: StatusChange) => void) | undefined
  },
  work: (tx: Transaction<DB>) => Promise<T>,
  changeOf: (result: T) => StatusChange | null,
): Promise<T> {
  const { events } = deps
  const result = await writerOf(deps).run(async (tx) => {
    const done = await work(tx)
    const change = events?.relayedByOutbox ? changeOf(done) : null
    if (change) {
      // the outbox backs the NOTIFY up for the other instances
      // (docs/postgres.md#the-outbox-changes-no-notification-can-lose); a value write
      // recorded its status event already, which serves
      if (change.kind !== 'status' || !recordedStatusEventIn(tx))
        await recordLiveChange(
          tx,
          change,
          new Date((deps.clock ?? systemClock).now()).toISOString(),
        )
    }
    return done
  })
  const change = changeOf(result)
  if (!change) return result
  deps.committed?.(change)
  await announceCommitted(events, change)
  return result
}

/**
 * Announces a committed change. Where the outbox relays changes between instances
 * (`relayedByOutbox`), the write's answer does not wait for the NOTIFY: the change is
 * stored and will reach every stream either way.
 */
export async function announceCommitted(
  events: StatusEventBus | undefined,
  change: StatusChange,
): Promise<void> {
  if (events?.relayedByOutbox) void announce(events, change)
  else await announce(events, change)
}

/** Hands a committed change to the bus, if there is one; never fails the caller. */
async function announce(events: StatusEventBus | undefined, change: StatusChange): Promise<void> {
  if (!events) return
  try {
    await events.publish(change)
  } catch {
    // note: the EventBus contract says publish never throws; this guards a faulty one
  }
}
