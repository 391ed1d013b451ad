import type { ApiKey, Db, NewApiKey, User } from '../../db/database.ts'

export const insertApiKey = (db: Db, key: NewApiKey): Promise<ApiKey> =>
  db.insertInto('api_keys').values(key).returningAll().executeTakeFirstOrThrow()

/** The key with this hash and its user, if the key is neither revoked nor expired at `now`. */
export async function findActiveKeyByHash(
  db: Db,
  hash: string,
  now: string,
): Promise<{ key: ApiKey; user: User } | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .select([
      'k.id as k_id',
      'k.user_id as k_user_id',
      'k.prefix as k_prefix',
      'k.key_hash as k_key_hash',
      'k.label as k_label',
      'k.created_at as k_created_at',
      'k.expires_at as k_expires_at',
      'k.revoked_at as k_revoked_at',
      'k.replaced_by as k_replaced_by',
      'k.scopes as k_scopes',
      'k.status_ids as k_status_ids',
      'u.id',
      'u.name',
      'u.email',
      'u.email_key',
      'u.plan',
      'u.verified',
      'u.created_at',
      'u.email_verified_at',
      'u.admin',
      'u.disabled_at',
      'u.locale',
    ])
    .where('k.key_hash', '=', hash)
    .where('k.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', now)]))
    .executeTakeFirst()
  if (!row) return undefined
  return {
    key: {
      id: row.k_id,
      user_id: row.k_user_id,
      prefix: row.k_prefix,
      key_hash: row.k_key_hash,
      label: row.k_label,
      created_at: row.k_created_at,
      expires_at: row.k_expires_at,
      revoked_at: row.k_revoked_at,
      replaced_by: row.k_replaced_by,
      scopes: row.k_scopes,
      status_ids: row.k_status_ids,
    },
    user: {
      id: row.id,
      name: row.name,
      email: row.email,
      email_key: row.email_key,
      plan: row.plan,
      verified: row.verified,
      created_at: row.created_at,
      // note: never carried into the key cache; authentication by key has no use for it
      password_hash: null,
      email_verified_at: row.email_verified_at,
      admin: row.admin,
      disabled_at: row.disabled_at,
      locale: row.locale,
    },
  }
}

/** Whether the user is an operator (docs/operations.md#operators): only their keys hold `admin`. */
export async function isOperator(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('admin')
    .where('id', '=', userId)
    .executeTakeFirst()
  return Number(row?.admin) === 1
}

export const listApiKeys = (db: Db, userId: string): Promise<ApiKey[]> =>
  db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

/** Sets a key's scopes (the column's JSON text). */
export async function setApiKeyScopes(db: Db, id: string, scopes: string): Promise<void> {
  await db.updateTable('api_keys').set({ scopes }).where('id', '=', id).execute()
}

export const findApiKeyById = (db: Db, id: string): Promise<ApiKey | undefined> =>
  db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()

/** Marks a key revoked; returns it, or undefined when there is no such key. */
export const revokeApiKey = (db: Db, id: string, at: string): Promise<ApiKey | undefined> =>
  db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(at)) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()

/**
 * Deletes a user's ended keys (revoked, or expired at `now`) beyond the `keep` that ended
 * last, at most `chunk` of them; returns how many went.
 */
export async function deleteEndedApiKeys(
  db: Db,
  userId: string,
  now: string,
  keep: number,
  chunk = 1000,
): Promise<number> {
  const old = await db
    .selectFrom('api_keys')
    .select('id')
    .where('user_id', '=', userId)
    .where((eb) =>
      eb.or([
        eb('revoked_at', 'is not', null),
        eb.and([eb('expires_at', 'is not', null), eb('expires_at', '<=', now)]),
      ]),
    )
    // when it ended: revoked, or else expired (an expired key revoked later counts as revoked then)
    .orderBy((eb) => eb.fn.coalesce('revoked_at', 'expires_at'), 'desc')
    .orderBy('id', 'desc')
    .limit(chunk)
    .offset(keep)
    .execute()
  if (old.length === 0) return 0
  const result = await db
    .deleteFrom('api_keys')
    .where(
      'id',
      'in',
      old.map((row) => row.id),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Keys of a user that work at `now`: neither revoked nor expired. */
export async function countActiveApiKeys(db: Db, userId: string, now: string): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * Ends a key that still works at `now` and was never rotated, naming its successor: revoked
 * at once, or (`until` later than now) set to expire then, never later than it already would.
 * Returns undefined when the key had already stopped working or been replaced, so of two
 * racing rotations exactly one wins, and a key in its grace period is not rotated again.
 */
export const retireActiveApiKey = (
  db: Db,
  id: string,
  successor: string,
  now: string,
  until: string,
): Promise<ApiKey | undefined> =>
  db
    .updateTable('api_keys')
    .set((eb) =>
      until <= now
        ? { revoked_at: now, replaced_by: successor }
        : {
            replaced_by: successor,
            expires_at: eb
              .case()
              .when(eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', until)]))
              .then(until)
              .else(eb.ref('expires_at'))
              .end(),
          },
    )
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('replaced_by', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .returningAll()
    .executeTakeFirst()

/**
 * Revokes every key of a user that works at `now` but `keep`; returns the ids revoked. An
 * expired key is left as it is: it stopped working on its own.
 */
export async function revokeWorkingApiKeys(
  db: Db,
  userId: string,
  now: string,
  keep?: string,
): Promise<string[]> {
  let query = db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
  if (keep !== undefined) query = query.where('id', '!=', keep)
  const rows = await query.returning('id').execute()
  return rows.map((row) => row.id)
}
