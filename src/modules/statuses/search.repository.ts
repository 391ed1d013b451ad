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
): Promise<SearchRow[]> {
  let query = db
    .selectFrom('statuses as s')
    .innerJoin('users as u', 'u.id', 's.owner_id')
    .select(['s.id', 's.share_id', 's.name', 's.value', 's.created_at', 'u.name as owner_name'])
    .where('s.listed', '=', 1)
    .where('s.access_type', '=', 'public')
  // note: ESCAPE on both engines; `%` and `_` in what was typed match only themselves
  for (const word of words)
    query = query.where(
      sql<boolean>`${sql.ref('s.name_search')} like ${`%${likeLiteral(word)}%`} escape '!'`,
    )
  const { after } = page
  if (after)
    query = query.where((eb) =>
      eb(eb.refTuple('s.created_at', 's.id'), '>', eb.tuple(after.createdAt, after.id)),
    )
  return query.orderBy('s.created_at').orderBy('s.id').limit(page.limit).execute()
}
