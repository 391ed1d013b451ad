import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { auditRoutes } from './audit.routes.ts'

/**
 * The security log's routes (docs/security.md#security-log); the events themselves are
 * recorded by the services whose changes they are.
 */
export const audit = fp(
  async (app: FastifyInstance) => {
    app.keyedRoutes(auditRoutes, { db: app.database.db, publicUrl: app.publicUrl })
  },
  { name: 'audit', dependencies: ['core', 'keyed-api'] },
)
