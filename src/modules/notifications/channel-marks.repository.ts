import type { Db } from '../../db/database.ts'
import type { ChannelRow } from './channel-types.ts'

// What the channel types themselves mark on a channel (docs/notifications.md#e-mail,
// #browser-push): confirmed by its link, or turned off because its push subscription is gone.

export const findChannelById = (db: Db, id: string): Promise<ChannelRow | undefined> =>
  db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst()

/** Marks the channel confirmed at `at` (if it was not yet); returns whether it is confirmed now. */
export async function markChannelVerified(db: Db, id: string, at: string): Promise<boolean> {
  await db
    .updateTable('channels')
    .set({ verified_at: at, updated_at: at })
    .where('id', '=', id)
    .where('verified_at', 'is', null)
    .execute()
  const row = await db
    .selectFrom('channels')
    .select('verified_at')
    .where('id', '=', id)
    .executeTakeFirst()
  return row !== undefined && row.verified_at !== null
}

/** Turns the channel off for `reason` (the service's doing, shown to its owner). */
export async function disableChannelFor(
  db: Db,
  id: string,
  reason: string,
  at: string,
): Promise<void> {
  await db
    .updateTable('channels')
    .set({ enabled: 0, disabled_reason: reason, updated_at: at })
    .where('id', '=', id)
    .execute()
}

/** Deletes a channel (one whose making could not be finished). */
export async function deleteChannelById(db: Db, id: string): Promise<void> {
  await db.deleteFrom('channels').where('id', '=', id).execute()
}
