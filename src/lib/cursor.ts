import { validationError } from './errors.ts'

/**
 * An opaque page cursor: a tuple of strings, base64url-encoded JSON (the same encoding as
 * `GET /v1/user/status`'s cursors).
 */
export const encodeCursor = (parts: readonly string[]): string =>
  Buffer.from(JSON.stringify(parts)).toString('base64url')

/** The 400 for a cursor this service could not have issued. */
export const cursorNotIssued = () =>
  validationError([{ field: 'cursor', message: 'is not a cursor this service issued' }])

/**
 * Decodes a cursor of one string per pattern, each matching its pattern, encoded exactly as
 * `encodeCursor` would encode it; anything else is a 400 validationError on `cursor`.
 * note: cursors are not signed, so one a client builds in the issued shape is just a
 * position in the caller's own list; the shape check keeps hand-made garbage out.
 */
export function decodeCursor(cursor: string, parts: readonly RegExp[]): string[] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (
      Array.isArray(parsed) &&
      parsed.length === parts.length &&
      parsed.every((p, i) => typeof p === 'string' && (parts[i] as RegExp).test(p)) &&
      encodeCursor(parsed) === cursor
    )
      return parsed
  } catch {
    // falls through to the validation error
  }
  throw cursorNotIssued()
}

// the shapes of what positions are made of: stored timestamps (`toISOString`) and ids (ids.ts)
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
const ID = /^[A-Za-z0-9][\w-]{20}$/
const TIMESTAMP_OR_HEAD = new RegExp(`${TIMESTAMP.source}|^$`)
const ID_OR_HEAD = new RegExp(`${ID.source}|^$`)

/**
 * Decodes a position in a list ordered by (created at, id). `['', '']` is the head of the
 * list: a user list's owner, who comes before every granted role.
 */
export function decodePosition(cursor: string): { createdAt: string; id: string } {
  const [createdAt, id] = decodeCursor(cursor, [TIMESTAMP_OR_HEAD, ID_OR_HEAD]) as [string, string]
  if ((createdAt === '') !== (id === '')) throw cursorNotIssued()
  return { createdAt, id }
}

/** One page of a list, with the cursor of the next page (null on the last). */
export interface Page<T> {
  items: T[]
  nextCursor: string | null
}

/**
 * Cuts a page from rows fetched with one row more than the limit (that extra row tells
 * whether another page follows); `position` names the cursor of a row.
 */
export function toPage<R, T>(
  rows: R[],
  limit: number | undefined,
  position: (row: R) => string[],
  map: (row: R) => T,
): Page<T> {
  const more = limit !== undefined && rows.length > limit
  const pageRows = more ? rows.slice(0, limit) : rows
  const last = pageRows[pageRows.length - 1]
  return {
    items: pageRows.map(map),
    nextCursor: more && last !== undefined ? encodeCursor(position(last)) : null,
  }
}

/** The `Link: <…>; rel="next"` header value for a paged list (as `GET /v1/user/status`). */
export const nextLink = (
  publicUrl: string | null,
  path: string,
  limit: number,
  cursor: string,
): string => `<${publicUrl ?? ''}${path}?limit=${limit}&cursor=${cursor}>; rel="next"`

/**
 * A page's items for the response body; when paging was asked for (a limit) and another page
 * follows, the `Link: <…>; rel="next"` header names it.
 */
export function pageItems<T>(
  reply: { header(name: string, value: string): unknown },
  page: Page<T>,
  next: { publicUrl: string | null; path: string; limit: number | undefined },
): T[] {
  if (page.nextCursor !== null && next.limit !== undefined)
    reply.header('link', nextLink(next.publicUrl, next.path, next.limit, page.nextCursor))
  return page.items
}
