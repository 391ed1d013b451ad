import { hash } from 'node:crypto'

/**
 * A strong entity tag for a representation: a hash of its JSON. Content-based, so it needs
 * no stored version and changes whenever anything a client can see changes.
 */
export const etagOf = (representation: unknown): string =>
  `"${hash('sha256', JSON.stringify(representation), 'base64url').slice(0, 22)}"`

/**
 * Whether an If-Match / If-None-Match header value matches the current tag (RFC 9110 §13.1).
 * `*` matches any existing representation; with `weak` (If-None-Match) W/ tags compare too.
 */
export function etagMatches(header: string, current: string | null, weak = false): boolean {
  if (current === null) return false
  if (header.trim() === '*') return true
  return header.split(',').some((raw) => {
    let tag = raw.trim()
    if (tag.startsWith('W/')) {
      if (!weak) return false
      tag = tag.slice(2)
    }
    return tag === current
  })
}
