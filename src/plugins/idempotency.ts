import type { FastifyInstance, FastifyRequest, preHandlerHookHandler } from 'fastify'
import {
  parseIdempotencyKey,
  requestFingerprint,
} from '../modules/idempotency/idempotency.service.ts'

/** What identifies a request for Idempotency-Key: its user, the key, and the request. */
export interface IdempotencyScope {
  userId: string
  /** The `Idempotency-Key` header; undefined when none was sent. */
  key: string | undefined
  /** Method, path and body, hashed; empty without a key (nothing is compared then). */
  fingerprint: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on the routes that declare `idempotent`, before their handler runs. */
    idempotency: IdempotencyScope
  }
}

/**
 * The path as routed, so that `/v1/status-keys/a-1/` and `/v1/status-keys/a%2D1` are the
 * same request as `/v1/status-keys/a-1`: the route's pattern with its decoded parameters.
 */
function canonicalPath(request: FastifyRequest): string {
  const params = request.params as Record<string, string>
  const path =
    request.routeOptions.url?.replace(/:(\w+)/g, (_, name: string) => params[name] ?? '') ?? ''
  // the query is part of the request (the plain-text PUT takes valueUntil there), in a
  // canonical order; a request without one keeps the fingerprint it always had
  const query = new URLSearchParams(
    Object.entries((request.query ?? {}) as Record<string, unknown>)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, String(value)] as [string, string])
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)),
  ).toString()
  return query === '' ? path : `${path}?${query}`
}

// note: a preHandler, so after body validation and before the handler's own checks, as
// docs/api.md#order-of-checks lists them
const readIdempotencyKey: preHandlerHookHandler = (request, _reply, done) => {
  const key = parseIdempotencyKey(request.headers['idempotency-key'])
  request.idempotency = {
    userId: request.caller.userId,
    key,
    // only a request with a key is ever compared with another
    fingerprint:
      key === undefined
        ? ''
        : requestFingerprint(request.method, canonicalPath(request), request.body),
  }
  done()
}

/**
 * Routes that declare `idempotent` (docs/api.md#safe-retries-idempotency-key) get their
 * `Idempotency-Key` checked and `request.idempotency` set, for the handler to run its write
 * with (`runIdempotent`); every other route ignores the header. Call before any route is
 * registered.
 */
export function idempotencyHooks(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent)
      route.preHandler = [...[route.preHandler ?? []].flat(), readIdempotencyKey]
  })
}
