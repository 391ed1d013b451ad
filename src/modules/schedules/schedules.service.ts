import type { Transaction } from 'kysely'
import type { DB } from '../../db/database.ts'
import { writerOf } from '../../db/writer.ts'
import type { FieldError } from '../../lib/errors.ts'
import { forbidden, validationError } from '../../lib/errors.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { accessById } from '../statuses/sharing.service.ts'
import type { Caller } from '../statuses/statuses.service.ts'
import {
  canonicalTimeZone,
  cronProblem,
  latestFire,
  nextFires,
  type ScheduleEntry,
} from './fires.ts'
import {
  claimDueSchedules,
  deleteSchedule as deleteScheduleRow,
  earliestNextFire,
  findSchedule,
  type ScheduleRow,
  setNextFire,
  upsertSchedule,
} from './schedules.repository.ts'
import { NEXT_FIRES, type Schedule, type ScheduleInput } from './schedules.schemas.ts'

const nowOf = (deps: Pick<ServiceDeps, 'clock'>): Date => new Date(deps.clock?.now() ?? Date.now())

const entriesOf = (row: ScheduleRow): ScheduleEntry[] => JSON.parse(row.entries) as ScheduleEntry[]

/** The schedule as the API shows it, with its next fires after `now`. */
function toSchedule(row: ScheduleRow, now: Date): Schedule {
  const entries = entriesOf(row)
  return {
    timezone: row.timezone,
    entries,
    next: nextFires(entries, row.timezone, now, NEXT_FIRES).map((fire) => ({
      at: fire.at.toISOString(),
      value: fire.entry.value,
    })),
    updatedAt: row.updated_at,
  }
}

/** The status the caller owns: 403 for another role, 404 when they cannot see it. */
async function owned(
  db: ServiceDeps['db'],
  caller: Caller,
  statusId: string,
  forWrite: boolean,
): Promise<void> {
  const { role } = await accessById(db, caller, statusId, { forWrite })
  if (role !== 'owner')
    throw forbidden('Only the owner may see or change the schedule of this status')
}

/**
 * The input's time zone, spelt as the platform does, and its entries, unless one is invalid:
 * 400 validationError naming each field at fault.
 */
function validated(input: ScheduleInput): { timezone: string; entries: ScheduleEntry[] } {
  const errors: FieldError[] = []
  const timezone = canonicalTimeZone(input.timezone)
  if (timezone === null)
    errors.push({ field: 'timezone', message: 'is not an IANA time zone (e.g. Europe/Berlin)' })
  input.entries.forEach((entry, i) => {
    const problem = cronProblem(entry.cron)
    if (problem) errors.push({ field: `entries.${i}.cron`, message: problem })
  })
  if (errors.length > 0 || timezone === null) throw validationError(errors)
  const entries = input.entries.map(({ cron, value, colorNo }) => ({
    cron: cron.trim().split(/\s+/).join(' '),
    value,
    ...(colorNo !== undefined && { colorNo }),
  }))
  return { timezone, entries }
}

/** What GET answers for a status without a schedule: nothing fires. */
const NO_SCHEDULE: Schedule = { timezone: null, entries: [], next: [], updatedAt: null }

/** GET /v1/status/:statusId/schedule. */
export async function getSchedule(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
): Promise<Schedule> {
  await owned(deps.db, caller, statusId, false)
  const row = await findSchedule(deps.db, statusId)
  return row ? toSchedule(row, nowOf(deps)) : NO_SCHEDULE
}

/** PUT /v1/status/:statusId/schedule: sets the schedule, replacing the one it had. */
export async function putSchedule(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  input: ScheduleInput,
): Promise<Schedule> {
  const { timezone, entries } = validated(input)
  const now = nowOf(deps)
  const nowIso = now.toISOString()
  const [next] = nextFires(entries, timezone, now, 1)
  const row = await writerOf(deps).run(async (tx) => {
    await owned(tx, caller, statusId, true)
    const previous = await findSchedule(tx, statusId)
    const row: ScheduleRow = {
      status_id: statusId,
      set_by: caller.userId,
      timezone,
      entries: JSON.stringify(entries),
      next_fire_at: next ? next.at.toISOString() : null,
      created_at: previous?.created_at ?? nowIso,
      updated_at: nowIso,
    }
    await upsertSchedule(tx, row)
    return row
  })
  return toSchedule(row, now)
}

/** DELETE /v1/status/:statusId/schedule, whether or not the status has one. */
export async function deleteSchedule(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
): Promise<void> {
  await writerOf(deps).run(async (tx) => {
    await owned(tx, caller, statusId, true)
    await deleteScheduleRow(tx, statusId)
  })
}

/** After downtime, the latest fire missed within this long is applied once; older ones not. */
export const CATCH_UP_MS = 24 * 60 * 60 * 1000

/** A fire to apply now: the entry's value on the status, as a change by `userId`. */
export interface DueFire {
  statusId: string
  /** The user who set the schedule: the change is theirs. */
  userId: string
  value: string
  colorNo?: number
  /** The instant the fire was due. */
  at: string
}

/**
 * Takes up to `limit` schedules' due fires in `tx`, which applies them: each schedule's
 * latest fire due by `now` (within CATCH_UP_MS; older ones are skipped), and moves its next
 * fire past `now`. Taken in the transaction that applies them, so each fire is applied once,
 * by one instance, or not at all when the transaction fails.
 */
export async function takeDueFires(
  tx: Transaction<DB>,
  now: Date,
  limit: number,
): Promise<DueFire[]> {
  const due: DueFire[] = []
  for (const row of await claimDueSchedules(tx, now.toISOString(), limit)) {
    const entries = entriesOf(row)
    const since = Math.max(now.getTime() - CATCH_UP_MS, Date.parse(row.next_fire_at as string) - 1)
    const fire = latestFire(entries, row.timezone, new Date(since), now)
    const [next] = nextFires(entries, row.timezone, now, 1)
    await setNextFire(tx, row.status_id, next ? next.at.toISOString() : null)
    if (fire)
      due.push({
        statusId: row.status_id,
        userId: row.set_by,
        value: fire.entry.value,
        ...(fire.entry.colorNo !== undefined && { colorNo: fire.entry.colorNo }),
        at: fire.at.toISOString(),
      })
  }
  return due
}

/** When the earliest schedule fires next, or null when none is ahead: a worker sleeps till then. */
export async function nextScheduledFire(db: ServiceDeps['db']): Promise<Date | null> {
  const at = await earliestNextFire(db)
  return at === null ? null : new Date(at)
}
