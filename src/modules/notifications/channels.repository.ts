import type { Insertable, Selectable, Updateable } from 'kysely'
import type { ChannelsTable, Db, DeliveryAttemptsTable } from '../../db/database.ts'

export type ChannelRow = Selectable<ChannelsTable>
export type AttemptRow = Selectable<DeliveryAttemptsTable>

/** A user's channels, oldest first. */
export const listUserChannels = (db: Db, userId: string): Promise<ChannelRow[]> =>
  db
    .selectFrom('channels')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

export async function countUserChannels(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('channels')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** One of the user's channels (undefined: none of theirs has this id). */
export const findUserChannel = (
  db: Db,
  userId: string,
  id: string,
): Promise<ChannelRow | undefined> =>
  db
    .selectFrom('channels')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst()

export async function insertChannel(db: Db, row: Insertable<ChannelsTable>): Promise<void> {
  await db.insertInto('channels').values(row).execute()
}

/** Changes one of the user's channels; false when none of theirs has this id. */
export async function updateUserChannel(
  db: Db,
  userId: string,
  id: string,
  changes: Updateable<ChannelsTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('channels')
    .set(changes)
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Deletes one of the user's channels (its deliveries and log go with it); false when none. */
export async function deleteUserChannel(db: Db, userId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('channels')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** The channel's last `limit` attempts, newest first. */
export const listChannelAttempts = (
  db: Db,
  channelId: string,
  limit: number,
): Promise<AttemptRow[]> =>
  db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('channel_id', '=', channelId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
