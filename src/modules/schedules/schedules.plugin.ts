import type { FastifyInstance } from 'fastify'
import { scheduleRoutes } from './schedules.routes.ts'
import { scheduleFires } from './schedules.service.ts'

/**
 * Schedules (docs/api.md#schedules): a status's values set by cron entries in a time zone,
 * written by the timed worker (docs/architecture.md#timed-changes). Needs the statuses and
 * the timed worker.
 */
export async function schedules(app: FastifyInstance): Promise<void> {
  app.timed.register(scheduleFires)
  app.keyedRoutes(scheduleRoutes, { deps: app.services, wake: () => app.timed.wake() })
}
