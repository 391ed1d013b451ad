import cookie from '@fastify/cookie'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { DEFAULT_CLIENT_LIMITS } from '../lib/client-limits.ts'
import { anonymousLimit } from './anonymous-limit.ts'
import { authenticate, enforceScopes } from './auth.ts'
import { conditionalRequests } from './conditional-requests.ts'
import { idempotencyHooks } from './idempotency.ts'
import { optionalBodies } from './json-body.ts'
import { openApiRoutes } from './openapi.ts'
import { publicViews } from './public-views.ts'

export interface RoutePolicyOptions {
  /** Anonymous requests per client address and minute (ANON_REQUESTS_PER_MINUTE; default 1 200). */
  anonRequestsPerMinute?: number
}

/**
 * What each route declares in its config (route-facts.ts), acted on by the plugins here and
 * shown in the OpenAPI document: authentication and scopes, idempotency, conditional
 * requests, optional bodies, public views, the anonymous limit. Each reads the routes
 * registered after it: register before any module. Needs the key cache (keys).
 */
export const routePolicies = fp(
  async (app: FastifyInstance, options: RoutePolicyOptions) => {
    // the cookies of every request, parsed before authentication reads the session's
    await app.register(cookie)
    openApiRoutes(app)
    authenticate(app, app.database.db, {
      cache: app.keyCache,
      clock: app.clock,
      publicUrl: app.publicUrl,
      emailVerification: app.mailer !== null,
    })
    enforceScopes(app)
    idempotencyHooks(app)
    conditionalRequests(app)
    optionalBodies(app)
    publicViews(app)
    await anonymousLimit(app, {
      max: options.anonRequestsPerMinute ?? DEFAULT_CLIENT_LIMITS.anonRequestsPerMinute,
    })
  },
  { name: 'route-policies', dependencies: ['core', 'keys', 'error-handler'] },
)
