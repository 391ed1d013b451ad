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
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-cache')
  done()
}
