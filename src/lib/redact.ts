import { API_KEY_PREFIX } from './ids.ts'

/**
 * An API key (`sdk_…`) or any other token statusd hands out (`sds_` session, `sdl_` sign-in
 * link, `sdi_` invitation, `sdp_` share link, …: lib/ids.ts newToken), in the clear.
 */
const KEY_SHAPED = /(sd[a-z]_)[A-Za-z0-9]+/g
const SECRET_PARAM = /key|token|secret|auth|pass/i

/**
 * Text that may hold an API key: the key prefix in any case, or a run of 40 letters and
 * digits (a key's secret part, alone). Such text is never echoed or logged as it came.
 */
export const KEY_LIKE = new RegExp(`${API_KEY_PREFIX}|sd[a-z]_[A-Za-z0-9]{20}|[A-Za-z0-9]{40}`, 'i')

/**
 * The text with every valid percent-escape decoded, one by one (a malformed one elsewhere,
 * `%ZZ`, does not stop the rest, as it stops `decodeURIComponent`), and again while any is
 * left (`%2573` is `%73`, which is `s`). For spotting a key only: bytes become latin1 chars.
 */
function unescaped(text: string): string {
  let current = text
  for (let round = 0; round < 8 && current.includes('%'); round++) {
    const next = current.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    )
    if (next === current) break
    current = next
  }
  return current
}

/** One path segment or query value: key-shaped text masked, also when percent-encoded. */
function redactPiece(piece: string): string {
  const masked = piece.replace(KEY_SHAPED, '$1[redacted]')
  if (masked !== piece || !piece.includes('%')) return masked
  // note: `sdk%5F…`, `%73dk_…` or `%2573dk_…` spell a key too once decoded; the whole piece goes
  KEY_SHAPED.lastIndex = 0
  return KEY_SHAPED.test(unescaped(piece)) ? '[redacted]' : piece
}

/**
 * A request URL fit for a log line: API-key-shaped text masked wherever it is, percent-encoded
 * or not, and the values of secret-looking query parameters masked. note: keys are never
 * accepted in the query string, but a client that tries it must not get its key written to
 * the log either.
 */
export function redactRequestUrl(url: string): string {
  const q = url.indexOf('?')
  const path = (q === -1 ? url : url.slice(0, q)).split('/').map(redactPiece).join('/')
  if (q === -1) return path
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=')
      if (eq === -1) return redactPiece(pair)
      const name = pair.slice(0, eq)
      return SECRET_PARAM.test(unescaped(name))
        ? `${name}=[redacted]`
        : `${redactPiece(name)}=${redactPiece(pair.slice(eq + 1))}`
    })
    .join('&')
  return `${path}?${query}`
}

/**
 * A request header's value fit for a log line (`Host`, `Accept-Version`): the value as it
 * came, or `[redacted]` when it, or its percent-decoded form, may hold a key (KEY_LIKE).
 */
export function redactHeaderValue(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  return KEY_LIKE.test(value) || KEY_LIKE.test(unescaped(value)) ? '[redacted]' : value
}
