import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'

// The files of the server-rendered pages (share page, wall): kept in memory, linked with the
// content's hash in their URL, so a new version is a new URL.

export interface PageAsset {
  body: string
  type: string
  /** The first 12 hex digits of the content's SHA-256: the version in `url`. */
  hash: string
  url: string
}

/** An asset served under `prefix` (e.g. `/s/assets`), its URL versioned by its content. */
export function pageAsset(prefix: string, name: string, type: string, body: string): PageAsset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12)
  return { body, type, hash, url: `${prefix}/${name}?v=${hash}` }
}

/**
 * Answers with an asset. The URL the pages link to carries the content's hash, so that one
 * may be kept for ever. note: any other `v` (or none) is answered too, but revalidated: kept as
 * immutable, `?v=<anything>` would pin whatever it got first.
 */
export function sendPageAsset(request: FastifyRequest, reply: FastifyReply, asset: PageAsset) {
  const { v } = request.query as { v?: unknown }
  return reply
    .headers({
      'content-type': asset.type,
      'x-content-type-options': 'nosniff',
      'cache-control':
        v === asset.hash ? 'public, max-age=31536000, immutable' : 'public, no-cache',
    })
    .send(asset.body)
}
