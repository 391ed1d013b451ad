import type { Insertable, Selectable } from 'kysely'
import type { Db, StatusSchedulesTable } from '../../db/database.ts'

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
