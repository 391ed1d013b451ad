import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyPluginOptions,
  FastifyTypeProvider,
  RawServerDefault,
} from 'fastify'
import fp from 'fastify-plugin'
import type { RequestCounter } from '../db/engine.ts'
import { API_RESPONSE_HEADERS } from '../lib/response-headers.ts'
import type { Plans } from '../modules/plans/plans.ts'
import { requireApiKey } from './auth.ts'
import { userRateLimit } from './rate-limit.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Adds a module's routes to the keyed API (`/v1`, keyedApi): they take an API key or the
     * session cookie and are rate limited per user. Call from a module's plugin.
     */
    keyedRoutes<Options extends FastifyPluginOptions, Provider extends FastifyTypeProvider>(
      routes: FastifyPluginAsync<Options, RawServerDefault, Provider>,
      options: Options,
    ): void
  }
}

type Mount = (v1: FastifyInstance) => Promise<unknown>
/** Each app's keyed routes, by its server (every scope of one app shares it). */
const mountsOf = new WeakMap<object, Mount[]>()

/**
 * Collects the modules' keyed routes (`app.keyedRoutes`), for keyedApi to register in the
 * one scope of the keyed API. Register before the modules.
 */
export const keyedRoutes = fp(
  async (app: FastifyInstance) => {
    const mounts: Mount[] = []
    mountsOf.set(app.server, mounts)
    app.decorate('keyedRoutes', (routes, options) => {
      mounts.push(async (v1) => v1.register(routes, options))
    })
  },
  { name: 'keyed-api' },
)

/**
 * The keyed API: everything under /v1 takes an API key or the session cookie (`verified`
 * unless a route declares otherwise), then is rate limited per user and plan, in one scope
 * (one count per user). Register after the modules, which add their routes with
 * `app.keyedRoutes`.
 */
export async function keyedApi(
  v1: FastifyInstance,
  options: { plans: Plans; counter: RequestCounter | null },
): Promise<void> {
  requireApiKey(v1)
  // per-user data: never cached by intermediaries, never sniffed or framed by a browser
  v1.addHook('onSend', (_request, reply, _payload, done) => {
    reply.headers(API_RESPONSE_HEADERS)
    done()
  })
  await userRateLimit(v1, options)
  for (const mount of mountsOf.get(v1.server) ?? []) await mount(v1)
}
