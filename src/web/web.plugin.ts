import type { FastifyInstance } from 'fastify'
import { appRoutes } from './app.routes.ts'
import { authPageRoutes } from './auth-pages.routes.ts'
import { docsRoutes } from './docs.routes.ts'
import { wallRoutes } from './wall.routes.ts'
import { invitePageRoutes, linkWebRoutes, webRoutes } from './web.routes.ts'

/**
 * The pages (HTML/SVG, each with its own not-found and error pages): the API docs, the
 * pages e-mailed and printed links open, the share page and badge, the app, the invitation
 * and private link pages, a public board's wall. Needs the statuses, the accounts and the
 * notifications.
 */
export async function web(app: FastifyInstance): Promise<void> {
  const deps = app.services
  await app.register(docsRoutes)
  await app.register(authPageRoutes, {
    prefix: '/auth',
    mail: app.accountMail,
    publicUrl: app.publicUrl,
    channels: app.channelConfirmations,
  })
  await app.register(webRoutes, {
    prefix: '/s',
    deps,
    linkBase: app.linkBase,
    rendered: app.renderedViews,
  })
  await app.register(appRoutes, { notFoundPage: app.notFoundPage })
  await app.register(invitePageRoutes, { prefix: '/invite', deps, clock: app.clock })
  await app.register(linkWebRoutes, { prefix: '/l', deps })
  // a public board's wall page (docs/app.md#boards-and-the-wall)
  await app.register(wallRoutes, { prefix: '/b', deps })
}
