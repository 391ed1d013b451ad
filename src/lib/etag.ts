import { createHash } from 'node:crypto'

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

/**
 * The entity tag of an anonymous view of a status (share view, share page, badge):
 * `"<shareId>.<version>-<digest>"`. The stored version names the status's state and moves with
 * every write; the digest, of the bytes sent, covers what a view shows beside the status row:
 * the owner's plan (clickable links), the page's history and people (a role granted or a
 * history entry expiring moves no version), and the renderer itself after an upgrade
 * (docs/sharing.md#caching-of-public-views). The share id, not the status id, which a view
 * keeps to the owner.
 */
export function viewEtag(shareId: string, version: number, body: string): string {
  const digest = createHash('sha256').update(body).digest('base64url').slice(0, 16)
  return `"${shareId}.${version}-${digest}"`
}
