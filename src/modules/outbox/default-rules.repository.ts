import type { Db } from '../../db/database.ts'

// The few writes to `notification_rules` that statuses make inside its own transactions
// (docs/notifications.md#rules): the rule a new subscriber gets, the rule a status's creator
// gets, and the rules that go with
// a role given up or a status deleted. The rules API itself is notifications' (rules.*).

/** Inserts the rule unless the user has one for the status already; true when inserted. */
export async function insertRuleUnlessPresent(
  db: Db,
  row: { status_id: string; user_id: string; condition: string; by_others?: 0 | 1; at: string },
): Promise<boolean> {
  const result = await db
    .insertInto('notification_rules')
    .values({
      status_id: row.status_id,
      user_id: row.user_id,
      condition: row.condition,
      channel_ids: null,
      by_others: row.by_others ?? 0,
      created_at: row.at,
      updated_at: row.at,
    })
    .onConflict((oc) => oc.columns(['status_id', 'user_id']).doNothing())
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0
}

/** Deletes one user's rule for one status. */
export async function deleteRuleOf(db: Db, statusId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('notification_rules')
    .where('status_id', '=', statusId)
    .where('user_id', '=', userId)
    .execute()
}

/** Deletes at most `limit` rules of a (deleted) status; returns how many. */
export async function deleteRulesOfStatusBatch(
  db: Db,
  statusId: string,
  limit: number,
): Promise<number> {
  const batch = db
    .selectFrom('notification_rules')
    .select('user_id')
    .where('status_id', '=', statusId)
    .limit(limit)
  const result = await db
    .deleteFrom('notification_rules')
    .where('status_id', '=', statusId)
    .where('user_id', 'in', batch)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** How many rules the user has, on all statuses (the plan's `maxNotificationRules`). */
export async function countRulesOfUser(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('notification_rules')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
