import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Writer } from '../../db/writer.ts'
import { healthRoutes } from './health.routes.ts'
import { WriteHealth } from './write-health.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** How the modules write: the database's writer, watched by the write health. */
    writer: Writer
  }
}

/**
 * Liveness and readiness (`/healthz`, `/readyz`): a write refused because storage is full or
 * read-only makes `/readyz` 503 until one succeeds again; every writer's unit and every
 * request's error tells it.
 */
export const health = fp(
  async (app: FastifyInstance) => {
    const { database } = app
    const writeHealth = new WriteHealth({ clock: app.clock, probe: () => database.probeWrite() })
    app.decorate('writer', writeHealth.watch(database.writer))
    app.addHook('onError', (_request, _reply, err, done) => {
      writeHealth.failed(err)
      done()
    })
    await app.register(healthRoutes, { ping: () => database.ping(), writes: writeHealth })
  },
  { name: 'health', dependencies: ['core'] },
)
