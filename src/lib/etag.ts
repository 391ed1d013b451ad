/**
 * A strong entity tag naming one stored version of one resource: `"<id>.<version>"`. A stored
 * version counter moves on every write, so the tag changes whenever the representation can;
 * the id keeps tags of different resources apart (see statuses.service.ts, statusEtag).
 */
export const versionEtag = (id: string, version: number): string => `"${id}.${version}"`

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
