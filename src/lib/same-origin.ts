import type { FastifyRequest } from 'fastify'

// Where a browser's request comes from (docs/accounts.md#sessions): a request a cookie
// authenticates may change something only when it comes from the service's own pages.

/**
 * The service's own origin: PUBLIC_URL's, or, when it is not set, the one the request was
 * addressed to (its scheme and Host, as TRUST_PROXY lets a proxy name them).
 */
export function serviceOrigin(request: FastifyRequest, publicUrl: string | null): string {
  if (publicUrl !== null) return new URL(publicUrl).origin
  return `${request.protocol}://${request.host}`.toLowerCase()
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * The browser says the request comes from a page of the service's own origin: `Origin` is
 * that origin, or `Sec-Fetch-Site` is `same-origin`. A request that says neither (no browser
 * sends a state-changing request without `Origin` any more) is not.
 */
export function isOwnOrigin(request: FastifyRequest, origin: string): boolean {
  if (header(request, 'sec-fetch-site') === 'same-origin') return true
  return header(request, 'origin')?.toLowerCase() === origin
}

/**
 * The browser says the request comes from another origin (`Sec-Fetch-Site` other than
 * `same-origin` or `none`, or an `Origin` that is not the service's). A client that is no
 * browser says nothing, and is not refused.
 */
export function crossSite(request: FastifyRequest, origin: string): boolean {
  const site = header(request, 'sec-fetch-site')
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true
  const from = header(request, 'origin')
  return from !== undefined && from.toLowerCase() !== origin
}
