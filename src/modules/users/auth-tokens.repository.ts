import type { Insertable, Selectable } from 'kysely'
import type { AuthTokensTable, Db } from '../../db/database.ts'

export type AuthToken = Selectable<AuthTokensTable>
type NewAuthToken = Insertable<AuthTokensTable>

export const insertAuthToken = (db: Db, token: NewAuthToken): Promise<AuthToken> =>
  db.insertInto('auth_tokens').values(token).returningAll().executeTakeFirstOrThrow()

export const findAuthTokenByHash = (db: Db, hash: string): Promise<AuthToken | undefined> =>
  db.selectFrom('auth_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst()

/**
 * Marks the token used at `now` if it is this purpose's, unused and unexpired, and returns it;
 * undefined otherwise. One conditional UPDATE: of two concurrent uses, exactly one matches.
 */
export const useAuthToken = (
  db: Db,
  hash: string,
  purpose: string,
  now: string,
): Promise<AuthToken | undefined> =>
  db
    .updateTable('auth_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', hash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst()

/** Marks every unused token of this purpose and user used (e.g. other reset links after a reset). */
export const useAllAuthTokens = async (
  db: Db,
  userId: string,
  purpose: string,
  now: string,
): Promise<void> => {
  await db
    .updateTable('auth_tokens')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute()
}

/** How many tokens of this purpose the user was given since `since` (used or not). */
export async function countAuthTokensSince(
  db: Db,
  userId: string,
  purpose: string,
  since: string,
): Promise<number> {
  const row = await db
    .selectFrom('auth_tokens')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Deletes at most `limit` tokens that expired before `before`; returns how many went. */
export async function deleteExpiredAuthTokens(
  db: Db,
  before: string,
  limit: number,
): Promise<number> {
  const result = await db
    .deleteFrom('auth_tokens')
    .where(
      'id',
      'in',
      db.selectFrom('auth_tokens').select('id').where('expires_at', '<', before).limit(limit),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
