import type { Db, RoleRow, StatusRow } from '../../db/database.ts'

/** A granted role: `updater` or `subscriber` (the owner is `statuses.owner_id`). */
export type GrantedRole = 'updater' | 'subscriber'

/** Sort position of a role row in grant order (id breaks ties within a millisecond). */
export interface RolePosition {
  createdAt: string
  id: string
}

export const findRole = (db: Db, statusId: string, userId: string): Promise<RoleRow | undefined> =>
  db
    .selectFrom('status_roles')
    .selectAll()
    .where('status_id', '=', statusId)
    .where('user_id', '=', userId)
    .executeTakeFirst()

/** Grants a role, replacing the one the user had on the status. */
export async function upsertRole(
  db: Db,
  row: { status_id: string; user_id: string; role: GrantedRole; created_at: string },
): Promise<void> {
  await db
    .insertInto('status_roles')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['status_id', 'user_id']).doUpdateSet((eb) => ({ role: eb.ref('excluded.role') })),
    )
    .execute()
}

/** Grants a role unless the user has one already; true when a row was inserted. */
export async function insertRoleUnlessPresent(
  db: Db,
  row: { status_id: string; user_id: string; role: GrantedRole; created_at: string },
): Promise<boolean> {
  // note: RETURNING names the inserted row on every engine; affected-row counts differ
  const inserted = await db
    .insertInto('status_roles')
    .values(row)
    .onConflict((oc) => oc.columns(['status_id', 'user_id']).doNothing())
    .returning('user_id')
    .executeTakeFirst()
  return inserted !== undefined
}

/** Removes the user's role on the status; true when there was one. */
export async function deleteRole(db: Db, statusId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('status_roles')
    .where('status_id', '=', statusId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** Ids of every user with a granted role on the status (for live-update visibility checks). */
export async function roleHolderIds(db: Db, statusId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('status_roles')
    .select('user_id')
    .where('status_id', '=', statusId)
    .execute()
  return rows.map((r) => r.user_id)
}

export interface RoleHolderRow {
  user_id: string
  name: string
  role: string
  created_at: string
}

/** The status's granted roles with the users' names, in grant order, after a position. */
export function listRoleHolders(
  db: Db,
  statusId: string,
  page: { limit?: number; after?: RolePosition },
): Promise<RoleHolderRow[]> {
  let query = db
    .selectFrom('status_roles as r')
    .innerJoin('users as u', 'u.id', 'r.user_id')
    .select(['r.user_id', 'u.name', 'r.role', 'r.created_at'])
    .where('r.status_id', '=', statusId)
  const after = page.after
  if (after)
    query = query.where((eb) =>
      eb.or([
        eb('r.created_at', '>', after.createdAt),
        eb.and([eb('r.created_at', '=', after.createdAt), eb('r.user_id', '>', after.id)]),
      ]),
    )
  query = query.orderBy('r.created_at').orderBy('r.user_id')
  if (page.limit !== undefined) query = query.limit(page.limit)
  return query.execute()
}

export type SubscriptionRow = Pick<StatusRow, 'id' | 'share_id' | 'name'> & {
  role: string
  role_created_at: string
}

/** Statuses the user has a granted role on, in grant order, after a position. */
export function listSubscribedStatuses(
  db: Db,
  userId: string,
  page: { limit?: number; after?: RolePosition; among?: readonly string[] },
): Promise<SubscriptionRow[]> {
  // a key confined to no status (a damaged row) sees none
  if (page.among?.length === 0) return Promise.resolve([])
  let query = db
    .selectFrom('status_roles as r')
    .innerJoin('statuses as s', 's.id', 'r.status_id')
    .select(['s.id', 's.share_id', 's.name', 'r.role'])
    .select('r.created_at as role_created_at')
    .where('r.user_id', '=', userId)
  if (page.among !== undefined) query = query.where('r.status_id', 'in', [...page.among])
  const after = page.after
  if (after)
    query = query.where((eb) =>
      eb.or([
        eb('r.created_at', '>', after.createdAt),
        eb.and([eb('r.created_at', '=', after.createdAt), eb('r.status_id', '>', after.id)]),
      ]),
    )
  query = query.orderBy('r.created_at').orderBy('r.status_id')
  if (page.limit !== undefined) query = query.limit(page.limit)
  return query.execute()
}
