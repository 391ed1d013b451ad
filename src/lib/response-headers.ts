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
