import type { FastifyInstance } from 'fastify'
import { scheduleRoutes } from './schedules.routes.ts'

/**
 * Schedules (docs/api.md#schedules): a status's values set by cron entries in a time zone.
 * Needs the statuses.
 */
export async function schedules(app: FastifyInstance): Promise<void> {
  app.keyedRoutes(scheduleRoutes, { deps: app.services })
}
