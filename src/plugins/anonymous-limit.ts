import { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { LRUCache } from 'lru-cache'
import { rateLimited } from '../lib/errors.ts'

/** The anonymous limit's window: `max` requests per address in a fixed minute. */
const WINDOW_MS = 60_000
/**
 * Counters of this many addresses at once (LRU); fewer would forget the counts of a flood's
 * least recent addresses and under-enforce.
 */
const ADDRESSES = 100_000

/** One address's count in its current window. */
interface Window {
  count: number
  /** When the window began (ms). */
  start: number
}

/**
 * Anonymous routes that declare `anonymousLimit` (docs/api.md#rate-limits) are limited per
 * client address: `max` requests in a fixed minute, with the same headers and 429
 * `rateLimited` body as the per-user limit of the keyed API. The address is `request.ip` (the
 * peer, or the client TRUST_PROXY lets X-Forwarded-For name), an IPv6 one by its /64. The
 * check runs first thing (`onRequest`), before any storage is read, so a flood of guessed
 * share ids costs a counter each. Call on the root instance before any route is registered.
 *
 * note: the count is the one @fastify/rate-limit keeps in memory (a fixed window per
 * address, `x-ratelimit-*` headers on every answer, `retry-after` on the 429), kept here as a
 * plain hook: the plugin's is an async function awaiting two promises, which every public
 * view, the hottest path of the service, paid for a counter that is synchronous work
 * (docs/performance.md#public-reads). The keyed API's per-user limit, whose count may be
 * in the database, still uses the plugin (rate-limit.ts).
 */
export function anonymousLimit(app: FastifyInstance, { max }: { max: number }): void {
  const windows = new LRUCache<string, Window>({
    // note: as a size of one per entry, not lru-cache's `max`, which allocates room for all
    // `max` entries up front (docs/performance.md#cold-start-and-memory)
    maxSize: ADDRESSES,
    sizeCalculation: () => 1,
  })
  const limit: onRequestHookHandler = (request, reply, done) => {
    // note: an address without a colon is IPv4, which normalizeIP keeps as is; its IPv6
    // test is a long regular expression, not worth running on every request for that
    const key = request.ip.includes(':') ? normalizeIP(request.ip) : request.ip
    const now = Date.now()
    let window = windows.get(key)
    if (window === undefined || window.start + WINDOW_MS <= now) {
      window = { count: 0, start: now }
      windows.set(key, window)
    }
    window.count += 1
    const resetSeconds = Math.ceil((WINDOW_MS - (now - window.start)) / 1000)
    reply.header('x-ratelimit-limit', max)
    reply.header('x-ratelimit-remaining', Math.max(0, max - window.count))
    reply.header('x-ratelimit-reset', resetSeconds)
    if (window.count <= max) return done()
    reply.header('retry-after', resetSeconds)
    throw rateLimited(resetSeconds)
  }
  app.addHook('onRoute', (route) => {
    if (route.config?.anonymousLimit) route.onRequest = [...[route.onRequest ?? []].flat(), limit]
  })
}
