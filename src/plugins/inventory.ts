import type { FastifyInstance } from 'fastify'

/** One registered route, as the inventory lists it. */
export interface RouteEntry {
  method: string
  url: string
  /** Left out of /openapi.json on purpose (the document itself, the docs UI's assets). */
  hidden: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered (OWASP API9: the inventory /openapi.json is checked against). */
    routeInventory(): RouteEntry[]
  }
}

/** Records every route as it is registered; call before any route is added. */
export function trackRoutes(app: FastifyInstance): void {
  const routes: RouteEntry[] = []
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      routes.push({ method, url: route.url, hidden: route.schema?.hide === true })
  })
  app.decorate('routeInventory', () => [...routes])
}
