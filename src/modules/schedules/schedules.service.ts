import type { Db } from '../../db/database.ts'
import { writerOf } from '../../db/writer.ts'
import type { FieldError } from '../../lib/errors.ts'
import { forbidden, validationError } from '../../lib/errors.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { accessById } from '../statuses/sharing.service.ts'
import type { Caller, TimedWrite } from '../statuses/statuses.service.ts'
import type { ClaimedWork, DueWindow, TimedSource } from '../timed/timed-worker.ts'
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

/**
 * Schedules as a source of the timed worker (docs/architecture.md#timed-changes): claims up
 * to `limit` schedules with a fire due by `window.now` in `tx`, which writes their values;
 * each gives its latest fire due after `window.since` (older ones are skipped), written as a
 * change by the user who set the schedule, and its next fire moves past `now`. Claimed in
 * the transaction that writes them, so each fire is written once, by one instance.
 */
async function claimDueFires(tx: Db, window: DueWindow, limit: number): Promise<ClaimedWork> {
  const now = new Date(window.now)
  const rows = await claimDueSchedules(tx, window.now, limit)
  const writes: TimedWrite[] = []
  for (const row of rows) {
    const entries = entriesOf(row)
    // fires from the one due on (or missed since) to now; at most the catch-up window back
    const since = Math.max(Date.parse(window.since), Date.parse(row.next_fire_at as string) - 1)
    const fire = latestFire(entries, row.timezone, new Date(since), now)
    const [next] = nextFires(entries, row.timezone, now, 1)
    await setNextFire(tx, row.status_id, next ? next.at.toISOString() : null)
    if (fire)
      writes.push({
        statusId: row.status_id,
        userId: row.set_by,
        value: fire.entry.value,
        ...(fire.entry.colorNo !== undefined && { colorNo: fire.entry.colorNo }),
      })
  }
  return { claimed: rows.length, writes }
}

export const scheduleFires: TimedSource = {
  name: 'schedules',
  claimDue: claimDueFires,
  nextDue: earliestNextFire,
}
