import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import { rateLimited } from '../lib/errors.ts'

/**
 * Anonymous routes that declare `anonymousLimit` (docs/api.md#rate-limits) are limited per
 * client address by @fastify/rate-limit: `max` requests in a fixed minute, one count shared
 * by all of them, with the same headers and 429 `rateLimited` body as the per-user limit of
 * the keyed API (rate-limit.ts). The address is `request.ip` (the peer, or the client
 * TRUST_PROXY lets X-Forwarded-For name), an IPv6 one by its /64 (the plugin's key). The
 * check runs first thing (`onRequest`), before any storage is read, so a flood of guessed
 * share ids costs a counter each. Call on the root instance before any route is registered.
 */
export async function anonymousLimit(app: FastifyInstance, { max }: { max: number }) {
  await app.register(rateLimit, {
    // only where a route asks, below; the keyed API registers its own limit
    global: false,
    max,
    timeWindow: 60_000,
    // counters of this many addresses at once (LRU); fewer would forget the counts of a
    // flood's least recent addresses and under-enforce
    cache: 100_000,
    errorResponseBuilder: (_request, context) => rateLimited(Math.ceil(context.ttl / 1000)),
  })
  const limit = app.rateLimit()
  app.addHook('onRoute', (route) => {
    if (route.config?.anonymousLimit) route.onRequest = [...[route.onRequest ?? []].flat(), limit]
  })
}
