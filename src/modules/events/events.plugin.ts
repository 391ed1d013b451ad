import type { FastifyInstance } from 'fastify'
import { shareEventsRoutes, shareLinkEventsRoutes, statusEventsRoutes } from './events.routes.ts'

/**
 * The event streams (docs/sharing.md#live-updates-server-sent-events): a status's keyed one,
 * a public status's, a private share link's. Needs the live updates and the statuses.
 */
export async function events(app: FastifyInstance): Promise<void> {
  const streams = () => ({
    db: app.database.db,
    feeds: app.feeds,
    sse: app.sseOptions,
    quota: app.streamQuota,
  })
  app.keyedRoutes(statusEventsRoutes, {
    ...streams(),
    streamCredentials: app.streamCredentials,
  })
  await app.register(shareEventsRoutes, streams())
  await app.register(shareLinkEventsRoutes, { ...streams(), deps: app.services })
}
