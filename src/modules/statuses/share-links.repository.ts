import type { Insertable, Selectable } from 'kysely'
import type { Db, ShareLinksTable } from '../../db/database.ts'

export type ShareLinkRow = Selectable<ShareLinksTable>

export async function insertShareLink(db: Db, row: Insertable<ShareLinksTable>): Promise<void> {
  await db.insertInto('share_links').values(row).execute()
}

/** The link whose token has this hash, if it is neither revoked nor expired at `now`. */
export const findValidShareLink = (
  db: Db,
  tokenHash: string,
  now: string,
): Promise<ShareLinkRow | undefined> =>
  db
    .selectFrom('share_links')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst()

/** How many of the status's links still work at `now`. */
export async function countValidShareLinks(db: Db, statusId: string, now: string): Promise<number> {
  const row = await db
    .selectFrom('share_links')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status_id', '=', statusId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * The status's links that work, or ended (revoked or expired) after `endedSince`, newest
 * first, at most `limit`.
 */
export const listRecentShareLinks = (
  db: Db,
  statusId: string,
  endedSince: string,
  limit: number,
): Promise<ShareLinkRow[]> =>
  db
    .selectFrom('share_links')
    .selectAll()
    .where('status_id', '=', statusId)
    .where((eb) => eb(eb.fn.coalesce('revoked_at', 'expires_at'), '>', endedSince))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()

export const findShareLink = (
  db: Db,
  statusId: string,
  linkId: string,
): Promise<ShareLinkRow | undefined> =>
  db
    .selectFrom('share_links')
    .selectAll()
    .where('status_id', '=', statusId)
    .where('id', '=', linkId)
    .executeTakeFirst()

/** Marks the link revoked at `at` (a link revoked already keeps its first revocation time). */
export async function markShareLinkRevoked(db: Db, linkId: string, at: string): Promise<void> {
  await db
    .updateTable('share_links')
    .set({ revoked_at: at })
    .where('id', '=', linkId)
    .where('revoked_at', 'is', null)
    .execute()
}

/** Of these link ids, those that still work at `now` (live streams check theirs with it). */
export async function validShareLinkIds(
  db: Db,
  ids: readonly string[],
  now: string,
): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await db
    .selectFrom('share_links')
    .select('id')
    .where('id', 'in', ids)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .execute()
  return new Set(rows.map((r) => r.id))
}

/** Deletes links that ended (revoked or expired) before `before` (housekeeping). */
export async function deleteShareLinksEndedBefore(db: Db, before: string): Promise<number> {
  const result = await db
    .deleteFrom('share_links')
    .where((eb) => eb(eb.fn.coalesce('revoked_at', 'expires_at'), '<', before))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
