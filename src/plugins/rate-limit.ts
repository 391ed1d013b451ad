import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type { RequestCounter } from '../db/engine.ts'
import { rateLimited } from '../lib/errors.ts'
import { planOf } from '../modules/plans/plan-of.ts'
import type { Plans } from '../modules/plans/plans.ts'

/** The window of the per-user limit: a plan's `requestsPerMinute` is per this many ms. */
export const USER_LIMIT_WINDOW_MS = 60_000

type StoreResult = { current: number; ttl: number }
type StoreCallback = (err: Error | null, result?: StoreResult) => void

/**
 * An @fastify/rate-limit store that counts in the database every instance shares
 * (`Database.requestCounter`): a user's requests through any instance count once.
 */
function sharedStore(counter: RequestCounter) {
  // note: the plugin constructs the store itself (`new Store(options)`), and a route with its
  // own limit gets `store.child(options)`: the same counts (one namespace per key) serve both
  return class SharedRequestStore {
    incr(key: string, callback: StoreCallback, timeWindow: number): void {
      counter.hit(`user:${key}`, timeWindow).then(
        ({ count, ttlMs }) => callback(null, { current: count, ttl: ttlMs }),
        (err: Error) => callback(err),
      )
    }
    child(): SharedRequestStore {
      return this
    }
  }
}

/**
 * The per-user limit of the keyed API (docs/api.md#rate-limits): a plan's
 * `requestsPerMinute` per user, whichever key or session they call with; plans without one
 * are not counted. Counted where the database says (`counter`): in the database when several
 * instances share it (PostgreSQL), so the limit holds across them; in this process's memory
 * when one serves it (SQLite). Over the limit: 429 `rateLimited` with Retry-After. Runs before
 * the body is read (`preParsing`), after authentication. Register in the keyed scope.
 */
export async function userRateLimit(
  scope: FastifyInstance,
  { plans, counter }: { plans: Plans; counter: RequestCounter | null },
): Promise<void> {
  await scope.register(rateLimit, {
    hook: 'preParsing',
    timeWindow: USER_LIMIT_WINDOW_MS,
    // counters of this many users at once (LRU, in memory); the default 5 000 would forget
    // the counts of the least recent users on a busy instance and under-enforce
    cache: 100_000,
    ...(counter && { store: sharedStore(counter) }),
    keyGenerator: (request) => request.caller.userId,
    allowList: (request) => planOf(plans, request.caller.plan).requestsPerMinute === null,
    max: (request) => planOf(plans, request.caller.plan).requestsPerMinute ?? 0,
    errorResponseBuilder: (_request, context) => rateLimited(Math.ceil(context.ttl / 1000)),
  })
}
