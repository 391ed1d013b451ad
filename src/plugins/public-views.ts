import type { FastifyInstance } from 'fastify'
import { publicViewHeaders } from '../lib/response-headers.ts'

/**
 * Routes that declare `publicView` (docs/sharing.md#public-views-no-api-key) answer with the
 * public view's headers, their errors too: any origin may read them, and they are always
 * revalidated. Call before any route is registered.
 */
export function publicViews(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.publicView) route.onSend = [...[route.onSend ?? []].flat(), publicViewHeaders]
  })
}
