import type { Db } from '../../db/database.ts'

// service_settings: values the service makes once and keeps (the VAPID key pair).

/**
 * Stores `value` under `name` unless a value is there already, then returns the stored one:
 * of several instances making it at the same first start, all end up with the first's.
 */
export async function insertSettingIfAbsent(
  db: Db,
  name: string,
  value: string,
  at: string,
): Promise<string> {
  await db
    .insertInto('service_settings')
    .values({ name, value, created_at: at })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
  const row = await db
    .selectFrom('service_settings')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow()
  return row.value
}

export const findSetting = async (db: Db, name: string): Promise<string | undefined> =>
  (
    await db
      .selectFrom('service_settings')
      .select('value')
      .where('name', '=', name)
      .executeTakeFirst()
  )?.value
