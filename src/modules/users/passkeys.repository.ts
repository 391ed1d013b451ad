import type { Insertable, Selectable } from 'kysely'
import type { Db, PasskeysTable } from '../../db/database.ts'

export type PasskeyRow = Selectable<PasskeysTable>
export type NewPasskeyRow = Insertable<PasskeysTable>

export const insertPasskey = (db: Db, row: NewPasskeyRow): Promise<PasskeyRow> =>
  db.insertInto('passkeys').values(row).returningAll().executeTakeFirstOrThrow()

/** A user's passkeys, oldest first. */
export const findPasskeysOfUser = (db: Db, userId: string): Promise<PasskeyRow[]> =>
  db
    .selectFrom('passkeys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

export const findPasskeyByCredentialId = (
  db: Db,
  credentialId: string,
): Promise<PasskeyRow | undefined> =>
  db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst()

/** Renames a user's passkey; undefined when the user has no passkey with this id. */
export const renamePasskeyOfUser = (
  db: Db,
  userId: string,
  id: string,
  name: string,
): Promise<PasskeyRow | undefined> =>
  db
    .updateTable('passkeys')
    .set({ name })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst()

/** Deletes a user's passkey; false when the user has no passkey with this id. */
export async function deletePasskeyOfUser(db: Db, userId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('passkeys')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** Deletes every passkey of a user; how many went. */
export async function deletePasskeysOfUser(db: Db, userId: string): Promise<number> {
  const result = await db.deleteFrom('passkeys').where('user_id', '=', userId).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/**
 * Records a sign-in with a passkey: its new signature counter and when. False when the
 * passkey is gone (deleted while the sign-in was being checked).
 */
export async function markPasskeyUsed(
  db: Db,
  id: string,
  counter: number,
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ counter, last_used_at: at })
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}
