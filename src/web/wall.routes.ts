import { readFileSync } from 'node:fs'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { translator } from '../i18n/i18n.ts'
import type { Language } from '../i18n/languages.ts'
import { BoardShareIdParamsSchema } from '../modules/boards/boards.schemas.ts'
import { publicBoard } from '../modules/boards/boards.service.ts'
import type { ServiceDeps } from '../modules/service-deps.ts'
import { prepareError } from '../plugins/error-handler.ts'
import { type PageAsset, pageAsset, sendPageAsset } from './page-assets.ts'
import { PageQuerySchema, pageLanguage, VARY_LANGUAGE } from './page-language.ts'
import { paletteCss } from './palette.ts'
import { renderWallMessage, renderWallPage, type WallAssets } from './wall-page.ts'

/**
 * The wall's Content Security Policy: the share page's (web.routes.ts PAGE_CSP, a test holds
 * them equal): only this origin's script, style and connections, nothing inline, no forms.
 * Framing is allowed, as for the share page: walls are put on dashboards.
 */
export const WALL_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'"

// The wall page of a public board, `GET /b/:shareId` (docs/app.md#boards-and-the-wall), and
// its two files. Its JSON and its stream are API routes (modules/boards/boards.routes.ts).

const ASSETS: Record<string, PageAsset> = {
  'wall.css': pageAsset(
    '/b/assets',
    'wall.css',
    'text/css; charset=utf-8',
    `${readFileSync(new URL('./assets/wall.css', import.meta.url), 'utf8')}\n${paletteCss()}\n`,
  ),
  'wall.js': pageAsset(
    '/b/assets',
    'wall.js',
    'text/javascript; charset=utf-8',
    readFileSync(new URL('./assets/wall.js', import.meta.url), 'utf8'),
  ),
}
const WALL_ASSETS: WallAssets = {
  css: (ASSETS['wall.css'] as PageAsset).url,
  js: (ASSETS['wall.js'] as PageAsset).url,
}

function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': WALL_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
      ...VARY_LANGUAGE,
    })
    .send(body)
}

const notFound = (lang: Language) =>
  renderWallMessage(
    lang,
    translator(lang)('page.wall.notFound'),
    translator(lang)('page.wall.notFoundText'),
    WALL_ASSETS,
  )

/** A documented response that is not JSON (for the OpenAPI document only). */
const page = (description: string) => ({
  description,
  content: { 'text/html': { schema: Type.String() } },
})

export const wallRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (
  app,
  { deps },
) => {
  app.setNotFoundHandler((request, reply) => sendHtml(reply, 404, notFound(pageLanguage(request))))
  app.setErrorHandler((err: Error, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = prepareError(err, request, reply, 'wall page failed')
    const lang = pageLanguage(request)
    if (apiError.statusCode === 404) return sendHtml(reply, 404, notFound(lang))
    return sendHtml(
      reply,
      apiError.statusCode,
      renderWallMessage(lang, translator(lang)('page.common.error'), apiError.message, WALL_ASSETS),
    )
  })

  app.get(
    '/assets/:name',
    { schema: { hide: true, params: Type.Object({ name: Type.String() }) } },
    async (request, reply) => {
      const found = Object.hasOwn(ASSETS, request.params.name)
        ? ASSETS[request.params.name]
        : undefined
      if (!found) return sendHtml(reply, 404, notFound(pageLanguage(request)))
      return sendPageAsset(request, reply, found)
    },
  )

  app.get(
    '/:shareId',
    {
      config: { auth: 'none', anonymousLimit: true },
      schema: {
        operationId: 'getWallPage',
        summary: 'The wall page of a public board (HTML, live tiles for a room display)',
        tags: ['public'],
        params: BoardShareIdParamsSchema,
        querystring: PageQuerySchema,
        response: {
          200: page('The wall page'),
          404: page('No public board here: unknown, deleted or private'),
          429: page('Too many anonymous requests from this address this minute; `Retry-After`'),
        },
      },
    },
    async (request, reply) =>
      sendHtml(
        reply,
        200,
        renderWallPage(
          pageLanguage(request),
          await publicBoard(deps, request.params.shareId),
          WALL_ASSETS,
        ),
      ),
  )
}
