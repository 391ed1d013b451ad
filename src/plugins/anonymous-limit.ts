import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import { rateLimited } from '../lib/errors.ts'

/**
 * Anonymous routes that declare `anonymousLimit` (docs/api.md#rate-limits) are limited per
 * client address: `max` requests in a fixed minute, with the same headers and 429
 * `rateLimited` body as the per-user limit of the keyed API. The address is `request.ip` (the
 * peer, or the client TRUST_PROXY lets X-Forwarded-For name), an IPv6 one by its /64. The
 * check runs first thing (`onRequest`), before any storage is read, so a flood of guessed
 * share ids costs a counter each. Call on the root instance before any route is registered.
 */
export async function anonymousLimit(app: FastifyInstance, { max }: { max: number }) {
  // note: global: false, so the limit reaches only the routes given its hook below; the
  // keyed API registers its own in its scope
  await app.register(rateLimit, {
    global: false,
    timeWindow: 60_000,
    max,
    // counters of this many addresses at once (LRU); the default 5 000 would forget the
    // counts of a flood's least recent addresses and under-enforce
    cache: 100_000,
    errorResponseBuilder: (_request, context) => rateLimited(Math.ceil(context.ttl / 1000)),
  })
  const limit = app.rateLimit()
  app.addHook('onRoute', (route) => {
    if (route.config?.anonymousLimit) route.onRequest = [...[route.onRequest ?? []].flat(), limit]
  })
}
