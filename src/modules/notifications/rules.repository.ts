import type { Selectable } from 'kysely'
import type { Db, NotificationRulesTable } from '../../db/database.ts'

export type RuleRow = Selectable<NotificationRulesTable>

export const findRule = (db: Db, statusId: string, userId: string): Promise<RuleRow | undefined> =>
  db
    .selectFrom('notification_rules')
    .selectAll()
    .where('status_id', '=', statusId)
    .where('user_id', '=', userId)
    .executeTakeFirst()

/** Creates or replaces the user's rule for the status (one per user and status). */
export async function upsertRule(
  db: Db,
  row: {
    status_id: string
    user_id: string
    condition: string
    channel_ids: string | null
    by_others: 0 | 1
  },
  at: string,
): Promise<void> {
  await db
    .insertInto('notification_rules')
    .values({ ...row, created_at: at, updated_at: at })
    .onConflict((oc) =>
      oc.columns(['status_id', 'user_id']).doUpdateSet({
        condition: row.condition,
        channel_ids: row.channel_ids,
        by_others: row.by_others,
        updated_at: at,
      }),
    )
    .execute()
}

export async function deleteRule(db: Db, statusId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('notification_rules')
    .where('status_id', '=', statusId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

export async function countRulesOf(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('notification_rules')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Of the channel ids given, those the user owns. */
export async function ownChannelIds(
  db: Db,
  userId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await db
    .selectFrom('channels')
    .select('id')
    .where('user_id', '=', userId)
    .where('id', 'in', [...ids])
    .execute()
  return new Set(rows.map((r) => r.id))
}
