import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

/**
 * The headers of every response to an authenticated `/v1` route, errors and event streams
 * included: per-user data, never cached by intermediaries, never sniffed or framed by a browser.
 */
export const API_RESPONSE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
} as const

/**
 * `Cache-Control` of a public view that answers 200 with an ETag (share view, share page,
 * badge): any cache may keep it, and asks again before every use (a 304 while the ETag
 * holds), so a change, or a status made private, shows at once through every cache. Each
 * revalidation is one lookup in statusd's render cache (docs/sharing.md#caching-of-public-views).
 */
export const PUBLIC_VIEW_CACHE_CONTROL = 'public, no-cache'

/**
 * onSend hook of the anonymous public views (`/v1/share/…` and their event streams), errors
 * included: public data for any page to embed (no credentials are involved), and always
 * revalidated.
 */
export function publicViewHeaders(
  _request: FastifyRequest,
  reply: FastifyReply,
  _payload: unknown,
  done: HookHandlerDoneFunction,
): void {
  reply.header('access-control-allow-origin', '*')
  // errors and lists: revalidated every time (the views with an ETag set their own)
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-cache')
  done()
}

/**
 * The headers of every answer to a private share link's token (docs/security.md#private-share-links),
 * errors and event streams included: no cache but the holder's own browser's keeps it
 * (`private, no-store`: a shared cache would serve it to whoever asks), no page it links to
 * learns the token from `Referer`, and no search engine indexes it.
 */
export const PRIVATE_LINK_HEADERS = {
  'cache-control': 'private, no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-robots-tag': 'noindex',
} as const

/**
 * The headers of a private share link's JSON views and stream: those of every answer to the
 * token, and any page may read them (docs/sharing.md#embeds): the token is the credential,
 * no cookie is involved.
 */
export const PRIVATE_LINK_VIEW_HEADERS = {
  ...PRIVATE_LINK_HEADERS,
  'access-control-allow-origin': '*',
} as const
