import type { Insertable, Selectable } from 'kysely'
import type { Db, StatusSchedulesTable } from '../../db/database.ts'
import { claimRowsForUpdate } from '../../db/locks.ts'

export type ScheduleRow = Selectable<StatusSchedulesTable>

export const findSchedule = (db: Db, statusId: string): Promise<ScheduleRow | undefined> =>
  db.selectFrom('status_schedules').selectAll().where('status_id', '=', statusId).executeTakeFirst()

/** Sets the status's schedule, replacing the one it had. */
export async function upsertSchedule(db: Db, row: Insertable<StatusSchedulesTable>): Promise<void> {
  await db
    .insertInto('status_schedules')
    .values(row)
    .onConflict((oc) =>
      oc.column('status_id').doUpdateSet({
        set_by: row.set_by,
        timezone: row.timezone,
        entries: row.entries,
        next_fire_at: row.next_fire_at,
        updated_at: row.updated_at,
      }),
    )
    .execute()
}

/** Removes the status's schedule, if it has one. */
export async function deleteSchedule(db: Db, statusId: string): Promise<void> {
  await db.deleteFrom('status_schedules').where('status_id', '=', statusId).execute()
}

/**
 * Claims up to `limit` schedules with a fire due at `now`, earliest first, for this
 * transaction: on PostgreSQL rows another instance is claiming are passed over (skip locked),
 * so each due fire is taken by one instance.
 */
export const claimDueSchedules = (tx: Db, now: string, limit: number): Promise<ScheduleRow[]> =>
  claimRowsForUpdate(
    tx,
    tx
      .selectFrom('status_schedules')
      .selectAll()
      .where('next_fire_at', '<=', now)
      .orderBy('next_fire_at')
      .limit(limit),
  ).execute()

/** Sets when the schedule fires next (null: never again). */
export async function setNextFire(db: Db, statusId: string, at: string | null): Promise<void> {
  await db
    .updateTable('status_schedules')
    .set({ next_fire_at: at })
    .where('status_id', '=', statusId)
    .execute()
}

/** The earliest fire ahead of every schedule, or null when none is. */
export async function earliestNextFire(db: Db): Promise<string | null> {
  const row = await db
    .selectFrom('status_schedules')
    .select((eb) => eb.fn.min('next_fire_at').as('at'))
    .executeTakeFirst()
  return (row?.at as string | null | undefined) ?? null
}
