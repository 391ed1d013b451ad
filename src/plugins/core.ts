import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Database } from '../db/engine.ts'
import { type Clock, systemClock } from '../lib/clock.ts'
import { validationError } from '../lib/errors.ts'
import { LazySchemas } from '../lib/lazy-schemas.ts'
import type { Mailer } from '../lib/mailer.ts'
import { listeningOrigin } from '../lib/origin.ts'
import type { Plans } from '../modules/plans/plans.ts'
import { drainOnClose, requireHostHeader, type ServerTimeouts } from './connections.ts'
import { trackRoutes } from './inventory.ts'
import { useStrictJsonBodies } from './json-body.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The storage every module reads and writes (closed last, when the app closes). */
    database: Database
    /** The plans users are on (PLANS_FILE). */
    plans: Plans
    /** Where the services read the time; tests pass a clock they move by hand. */
    clock: Clock
    /** The service's external URL (PUBLIC_URL), or null. */
    publicUrl: string | null
    /** The origin links point at: PUBLIC_URL, else where the server listens. */
    linkBase: () => string
    /** Sends e-mail (SMTP_URL); null: no e-mail. */
    mailer: Mailer | null
  }
}

// Bodies are validated strictly: no coercion ("3" is not 3), no defaults filled in, nothing
// removed, every error reported. Query strings arrive as text, so they alone are coerced.
const ajvOptions = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: false,
  strict: true,
  // a body that is one of several kinds by a property (a channel's `type`) is checked
  // against that kind's schema alone, and its errors are that kind's
  discriminator: true,
} as const
const bodyAjv = addFormats.default(new Ajv({ ...ajvOptions, coerceTypes: false }))
const queryAjv = addFormats.default(new Ajv({ ...ajvOptions, coerceTypes: true }))

/** What the core takes of the app's options (AppDeps, app.ts). */
export interface CoreOptions {
  database: Database
  plans: Plans
  /** The service's external URL (PUBLIC_URL); absent: where the server listens. */
  publicUrl?: string | null
  /** Where the services, caches and workers read the time; tests pass a clock they move by hand. */
  clock?: Clock
  /**
   * Sends e-mail (SMTP_URL; docs/accounts.md#e-mail): verification, password reset and
   * invitation links. Null or absent: no e-mail; accounts start verified, and `statusd user
   * link` is the way in.
   */
  mailer?: Mailer | null
  /** The server's timeouts (drainOnClose reads them at shutdown). */
  timeouts: Pick<ServerTimeouts, 'checkInterval' | 'requestTimeout'>
}

/**
 * What every request and every module shares: the storage, the plans, the clock and the
 * service's links, decorated on the root; route schemas compiled on first use; the
 * server-wide request checks (Host, NUL, JSON bodies only), the request id and nosniff on
 * every answer, the drain at shutdown. Register first: before any route, and so that the
 * storage it decorates closes after everything registered after it.
 */
export const core = fp(
  async (app: FastifyInstance, options: CoreOptions) => {
    const { database } = options
    const publicUrl = options.publicUrl ?? null
    app.decorate('database', database)
    app.decorate('plans', options.plans)
    app.decorate('clock', options.clock ?? systemClock)
    app.decorate('publicUrl', publicUrl)
    app.decorate('mailer', options.mailer ?? null)
    // note: never the request's Host, which the client chooses (docs/security.md)
    // note: the listening origin is remembered once the server listens (its address stays):
    // every value write asks for it, and server.address() showed in a PATCH's profile
    let listening: string | undefined
    app.decorate('linkBase', () => {
      if (publicUrl !== null) return publicUrl
      if (listening !== undefined) return listening
      const address = app.server.address()
      if (address === null) return listeningOrigin(address)
      listening = listeningOrigin(address)
      return listening
    })

    trackRoutes(app)
    // route schemas compile on first use only: those of routes never called would take memory
    // for nothing (docs/performance.md#cold-start-and-memory)
    const schemas = new LazySchemas({ body: bodyAjv, query: queryAjv })
    app.setValidatorCompiler(schemas.validatorCompiler)
    app.setSerializerCompiler(schemas.serializerCompiler)
    app.decorate('compileSchemas', () => schemas.compileAll())
    // note: only JSON bodies; without this, text/plain would reach validation as a string
    app.removeContentTypeParser('text/plain')
    useStrictJsonBodies(app)
    app.addHook('onRequest', requireHostHeader)
    drainOnClose(app, options.timeouts)
    // no id, key or share id holds NUL, and PostgreSQL cannot even compare text holding it
    app.addHook('onRequest', (request, _reply, done) => {
      if (/%00/i.test(request.url))
        throw validationError(
          [{ field: 'url', message: 'must not contain NUL (%00)' }],
          'Request URL is invalid',
        )
      done()
    })
    app.addHook('onSend', (request, reply, _payload, done) => {
      reply.header('x-request-id', request.id)
      // every response, not only the API's: no browser second-guesses a content type
      reply.header('x-content-type-options', 'nosniff')
      done()
    })
    app.addHook('onClose', () => database.close())
  },
  { name: 'core' },
)
