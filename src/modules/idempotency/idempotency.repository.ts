import type { Db, IdempotencyRecord } from '../../db/database.ts'

export const findIdempotencyRecord = (
  db: Db,
  userId: string,
  key: string,
): Promise<IdempotencyRecord | undefined> =>
  db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .where('key', '=', key)
    .executeTakeFirst()

/** Stores a response under its key; false when the key is already taken (a concurrent retry). */
export async function insertIdempotencyRecord(db: Db, record: IdempotencyRecord): Promise<boolean> {
  const inserted = await db
    .insertInto('idempotency_keys')
    .values(record)
    .onConflict((oc) => oc.doNothing())
    .returning('key')
    .executeTakeFirst()
  return inserted !== undefined
}

/** Deletes up to `limit` records stored before `before` (oldest first); how many it deleted. */
export async function deleteIdempotencyRecordsBefore(
  db: Db,
  before: string,
  limit: number,
): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple('user_id', 'key'),
        'in',
        selectFrom('idempotency_keys')
          .select(['user_id', 'key'])
          .where('created_at', '<', before)
          .orderBy('created_at')
          .limit(limit)
          .$asTuple('user_id', 'key'),
      ),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Deletes up to `limit` of one user's records; how many it deleted. */
export async function deleteIdempotencyRecordsOf(
  db: Db,
  userId: string,
  limit: number,
): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('user_id', '=', userId)
    .where('key', 'in', (eb) =>
      eb.selectFrom('idempotency_keys').select('key').where('user_id', '=', userId).limit(limit),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
