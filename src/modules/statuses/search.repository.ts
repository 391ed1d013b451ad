import { sql } from 'kysely'
import type { Db } from '../../db/database.ts'

/** A listed public status as search finds it, with its owner's name. */
export interface SearchRow {
  id: string
  share_id: string
  name: string
  value: string | null
  created_at: string
  owner_name: string
}

/** `text` as a LIKE pattern that matches it literally, `!` being the escape character. */
export const likeLiteral = (text: string): string => text.replace(/[!%_]/g, (c) => `!${c}`)

/**
 * Listed public statuses whose folded name (`name_search`) holds every one of `words`
 * (already folded), in creation order, after a position. Only listed rows are read: the
 * statuses_listed index leads with `listed`, so the statuses nobody listed cost nothing.
 */
export function searchListedStatuses(
  db: Db,
  words: readonly string[],
  page: { limit: number; after?: { createdAt: string; id: string } },
  among?: readonly string[],
): Promise<SearchRow[]> {
  // the page's ids first, from the statuses_listed index alone (it holds every column the
  // filter reads), then those rows: testing names in the index is far cheaper than reading
  // each listed row to test its name (docs/decisions/0016-bounded-work-on-large-tables.md)
  let ids = db
    .selectFrom('statuses')
    .select('id')
    .where('listed', '=', 1)
    .where('access_type', '=', 'public')
  // note: ESCAPE on both engines; `%` and `_` in what was typed match only themselves
  for (const word of words)
    ids = ids.where(
      sql<boolean>`${sql.ref('name_search')} like ${`%${likeLiteral(word)}%`} escape '!'`,
    )
  // a key confined to some statuses (a device key) finds none but those
  if (among !== undefined) {
    if (among.length === 0) return Promise.resolve([])
    ids = ids.where('id', 'in', [...among])
  }
  const { after } = page
  if (after)
    ids = ids.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.createdAt, after.id)),
    )
  ids = ids.orderBy('created_at').orderBy('id').limit(page.limit)
  return db
    .selectFrom('statuses as s')
    .innerJoin('users as u', 'u.id', 's.owner_id')
    .select(['s.id', 's.share_id', 's.name', 's.value', 's.created_at', 'u.name as owner_name'])
    .where('s.id', 'in', ids)
    .orderBy('s.created_at')
    .orderBy('s.id')
    .execute()
}
