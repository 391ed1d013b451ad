import type { Db } from '../../db/database.ts'

// The schedule's one row in service_settings: when the last scheduled backup began.
const LAST_SCHEDULED = 'backups.last_scheduled_at'

/** When the last scheduled backup began (ISO text), or undefined: never. */
export const findLastScheduled = async (db: Db): Promise<string | undefined> =>
  (
    await db
      .selectFrom('service_settings')
      .select('value')
      .where('name', '=', LAST_SCHEDULED)
      .executeTakeFirst()
  )?.value

/** Records that a scheduled backup begins at `at`. */
export async function recordScheduled(db: Db, at: string): Promise<void> {
  await db
    .insertInto('service_settings')
    .values({ name: LAST_SCHEDULED, value: at, created_at: at })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: at }))
    .execute()
}
