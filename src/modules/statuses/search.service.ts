import type { Static } from 'typebox'
import { Type } from 'typebox'
import { decodePosition, type Page, toPage } from '../../lib/cursor.ts'
import { validationError } from '../../lib/errors.ts'
import type { CredentialLimits } from '../keys/scopes.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { searchListedStatuses } from './search.repository.ts'
import { searchableName } from './statuses.service.ts'

/** Longest query text; a query of more words than MAX_SEARCH_WORDS is refused. */
export const MAX_SEARCH_LENGTH = 100
export const MAX_SEARCH_WORDS = 8
export const DEFAULT_SEARCH_PAGE = 20
export const MAX_SEARCH_PAGE = 100

export const SearchQuerySchema = Type.Object({
  q: Type.String({
    minLength: 1,
    maxLength: MAX_SEARCH_LENGTH,
    description: `Words to find in the name (at most ${MAX_SEARCH_WORDS}); each must appear in it, in any case`,
  }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SEARCH_PAGE })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
})

/** A status search found: what its share page shows anyone, and how to follow it. */
export const SearchResultSchema = Type.Object(
  {
    statusId: Type.String({
      description: 'To follow it: `POST /v1/status/:statusId/subscription`',
    }),
    shareId: Type.String({ description: 'Its share page is `/s/:shareId`' }),
    name: Type.String(),
    value: Type.Union([Type.String(), Type.Null()]),
    ownerName: Type.String({ description: "The owner's display name" }),
  },
  {
    $id: 'SearchResult',
    additionalProperties: false,
    description: 'A listed public status (docs/accounts.md#discovery)',
    examples: [
      {
        statusId: 'aQHwS9dTxhRMpO5YH1z4I',
        shareId: 's6hkaick',
        name: 'Library opening hours',
        value: 'OPEN',
        ownerName: 'City Library',
      },
    ],
  },
)
export type SearchResult = Static<typeof SearchResultSchema>

/** The words of a query, folded as names are (`searchableName`); 400 when there are none or too many. */
export function searchWords(q: string): string[] {
  const words = searchableName(q)
    .split(/\s+/u)
    .filter((w) => w !== '')
  if (words.length === 0)
    throw validationError([{ field: 'q', message: 'must hold at least one word' }])
  if (words.length > MAX_SEARCH_WORDS)
    throw validationError([{ field: 'q', message: `must hold at most ${MAX_SEARCH_WORDS} words` }])
  // the same word twice narrows nothing
  return [...new Set(words)]
}

/**
 * GET /v1/search/statuses — listed public statuses whose name holds every word of `q`
 * (docs/accounts.md#discovery), in creation order, one page at a time. A private status is
 * never found, listed or not.
 */
export async function searchStatuses(
  deps: ServiceDeps,
  query: { q: string; limit?: number; cursor?: string },
  limits?: CredentialLimits,
): Promise<Page<SearchResult>> {
  const words = searchWords(query.q)
  const limit = query.limit ?? DEFAULT_SEARCH_PAGE
  const after = query.cursor === undefined ? undefined : decodePosition(query.cursor)
  // one row more than asked tells whether another page follows
  const rows = await searchListedStatuses(
    deps.db,
    words,
    { limit: limit + 1, after },
    limits?.statusIds ?? undefined,
  )
  return toPage(
    rows,
    limit,
    (r) => [r.created_at, r.id],
    (r) => ({
      statusId: r.id,
      shareId: r.share_id,
      name: r.name,
      value: r.value,
      ownerName: r.owner_name,
    }),
  )
}
