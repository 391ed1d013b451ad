import type { Insertable, Selectable } from 'kysely'
import type {
  Db,
  InvitationLinksTable,
  InvitationMailsTable,
  RoleInvitationsTable,
} from '../../db/database.ts'
import type { RolePosition } from './sharing.repository.ts'

export type RoleInvitationRow = Selectable<RoleInvitationsTable>
export type InvitationLinkRow = Selectable<InvitationLinksTable>

/** A pending invitation with what its invitee and owner are shown: the status's and inviter's names. */
export interface RoleInvitationView extends RoleInvitationRow {
  status_name: string
  inviter_name: string
}

/**
 * Makes the pending invitation of a user to a status, replacing any earlier one for the pair
 * (one pending invitation per user and status: the owner's latest word counts).
 */
export async function replaceRoleInvitation(
  db: Db,
  row: Insertable<RoleInvitationsTable>,
): Promise<void> {
  await db
    .deleteFrom('role_invitations')
    .where('status_id', '=', row.status_id)
    .where('user_id', '=', row.user_id)
    .execute()
  await db.insertInto('role_invitations').values(row).execute()
}

/** Withdraws the pending invitation of a user to a status; true when there was one. */
export async function deleteRoleInvitationFor(
  db: Db,
  statusId: string,
  userId: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('role_invitations')
    .where('status_id', '=', statusId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** Withdraws the pending transfer of the status (its invitation for the role `owner`); true when there was one. */
export async function withdrawTransfers(db: Db, statusId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('role_invitations')
    .where('status_id', '=', statusId)
    .where('role', '=', 'owner')
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** The invitation by id if it is addressed to this user (someone else's is not found). */
export const findRoleInvitationOf = (
  db: Db,
  id: string,
  userId: string,
): Promise<RoleInvitationRow | undefined> =>
  db
    .selectFrom('role_invitations')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst()

/** The pending invitation of a user to a status, if any. */
export const findRoleInvitationFor = (
  db: Db,
  statusId: string,
  userId: string,
): Promise<RoleInvitationRow | undefined> =>
  db
    .selectFrom('role_invitations')
    .selectAll()
    .where('status_id', '=', statusId)
    .where('user_id', '=', userId)
    .executeTakeFirst()

/** Deletes the invitation by id if it is addressed to this user; true when it was. */
export async function deleteRoleInvitationOf(db: Db, id: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('role_invitations')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/**
 * Pending invitations with the status's and inviter's names, oldest first, after a position:
 * those addressed to a user, or those made on a status.
 */
export function listRoleInvitations(
  db: Db,
  where: { userId: string; among?: readonly string[] } | { statusId: string },
  page: { limit?: number; after?: RolePosition },
): Promise<RoleInvitationView[]> {
  let query = db
    .selectFrom('role_invitations as i')
    .innerJoin('statuses as s', 's.id', 'i.status_id')
    // note: a left join: the inviter is the owner, whose deletion takes the status along,
    // but a missing inviter must not hide the invitation
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .selectAll('i')
    .select(['s.name as status_name'])
    .select((eb) => eb.fn.coalesce('u.name', eb.val('')).as('inviter_name'))
  if ('userId' in where) {
    query = query.where('i.user_id', '=', where.userId)
    // note: an empty list matches nothing (`in ()` is not SQL)
    if (where.among) query = query.where('i.status_id', 'in', ['', ...where.among])
  } else query = query.where('i.status_id', '=', where.statusId)
  const after = page.after
  if (after)
    query = query.where((eb) =>
      eb.or([
        eb('i.created_at', '>', after.createdAt),
        eb.and([eb('i.created_at', '=', after.createdAt), eb('i.id', '>', after.id)]),
      ]),
    )
  query = query.orderBy('i.created_at').orderBy('i.id')
  if (page.limit !== undefined) query = query.limit(page.limit)
  return query.execute()
}

export async function insertInvitationLink(
  db: Db,
  row: Insertable<InvitationLinksTable>,
): Promise<InvitationLinkRow> {
  return db.insertInto('invitation_links').values(row).returningAll().executeTakeFirstOrThrow()
}

export const findInvitationLinkByHash = (
  db: Db,
  tokenHash: string,
): Promise<InvitationLinkRow | undefined> =>
  db
    .selectFrom('invitation_links')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst()

/** The status's invitation links, oldest first, after a position. */
export function listInvitationLinks(
  db: Db,
  statusId: string,
  page: { limit?: number; after?: RolePosition },
): Promise<InvitationLinkRow[]> {
  let query = db.selectFrom('invitation_links').selectAll().where('status_id', '=', statusId)
  const after = page.after
  if (after)
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)]),
      ]),
    )
  query = query.orderBy('created_at').orderBy('id')
  if (page.limit !== undefined) query = query.limit(page.limit)
  return query.execute()
}

/** Revokes a link of the status that is not revoked yet; true when it was. */
export async function revokeInvitationLink(
  db: Db,
  statusId: string,
  id: string,
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable('invitation_links')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('status_id', '=', statusId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/**
 * Spends one use of a link that is still valid at `now`: one statement that checks and
 * decrements, so two concurrent accepts of the last use cannot both succeed (on PostgreSQL
 * the second waits for the first's row lock, then finds `uses_left` 0; on SQLite writes are
 * serial). Returns the uses left after this one, or undefined when nothing was spent.
 */
export async function spendInvitationLinkUse(
  db: Db,
  id: string,
  now: string,
): Promise<number | undefined> {
  const row = await db
    .updateTable('invitation_links')
    .set((eb) => ({ uses_left: eb('uses_left', '-', 1) }))
    .where('id', '=', id)
    .where('uses_left', '>', 0)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('uses_left')
    .executeTakeFirst()
  return row === undefined ? undefined : Number(row.uses_left)
}

/**
 * When the invitation mails sent since `since` to one address (`to_key`) or by one inviter
 * (`sender_id`) went, oldest first: at most `limit` of them.
 */
export async function invitationMailTimes(
  db: Db,
  by: { column: 'to_key' | 'sender_id'; value: string },
  since: string,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('invitation_mails')
    .select('created_at')
    .where(by.column, '=', by.value)
    .where('created_at', '>', since)
    .orderBy('created_at')
    .limit(limit)
    .execute()
  return rows.map((row) => row.created_at)
}

/** Records an invitation mail sent, and deletes at most `pruneLimit` rows older than `before`. */
export async function insertInvitationMail(
  db: Db,
  row: Insertable<InvitationMailsTable>,
  before: string,
  pruneLimit: number,
): Promise<void> {
  await db
    .deleteFrom('invitation_mails')
    .where(
      'id',
      'in',
      db
        .selectFrom('invitation_mails')
        .select('id')
        .where('created_at', '<', before)
        .limit(pruneLimit),
    )
    .execute()
  await db.insertInto('invitation_mails').values(row).execute()
}
