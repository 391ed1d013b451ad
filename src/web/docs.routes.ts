import { readFileSync } from 'node:fs'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type OpenApiDocument, renderDocsPage } from './docs-page.ts'
import { type PageAsset, pageAsset, sendPageAsset } from './page-assets.ts'

const PREFIX = '/docs'
/**
 * The policy of every /docs response: its own stylesheet and icon, no script at all, never
 * framed (docs/api.md#api-reference-page).
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const ASSETS: Record<string, PageAsset> = {
  'docs.css': pageAsset(
    `${PREFIX}/static`,
    'docs.css',
    'text/css; charset=utf-8',
    readFileSync(new URL('./assets/docs.css', import.meta.url), 'utf8'),
  ),
  'logo.svg': pageAsset(
    `${PREFIX}/static`,
    'logo.svg',
    'image/svg+xml; charset=utf-8',
    readFileSync(new URL('./assets/favicon.svg', import.meta.url), 'utf8'),
  ),
}

/**
 * GET /docs: the API reference, the app's own OpenAPI document rendered to plain HTML on the
 * first request and kept (docs/decisions/0015-api-reference-as-plain-html.md); `/docs/json`
 * and `/docs/yaml`, the document itself; `/docs/static/…`, the page's stylesheet and icon.
 */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  let page: Promise<string> | undefined
  const headers = (type: string) => ({
    'content-type': type,
    'content-security-policy': DOCS_CSP,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
  })
  const hide = { schema: { hide: true } }

  app.get(PREFIX, hide, async (_request, reply) => {
    page ??= app.openApiDocument().then(
      (doc) =>
        renderDocsPage(doc as OpenApiDocument, {
          css: (ASSETS['docs.css'] as PageAsset).url,
          icon: (ASSETS['logo.svg'] as PageAsset).url,
        }),
      (err: unknown) => {
        page = undefined
        throw err
      },
    )
    return reply.headers(headers('text/html; charset=utf-8')).send(await page)
  })
  app.get(`${PREFIX}/json`, hide, async (_request, reply) =>
    reply.headers(headers('application/json; charset=utf-8')).send(await app.openApiDocument()),
  )
  app.get(`${PREFIX}/yaml`, hide, async (_request, reply) =>
    reply
      .headers(headers('application/yaml; charset=utf-8'))
      .send(await app.openApiDocument({ yaml: true })),
  )
  app.get<{ Params: { name: string } }>(
    `${PREFIX}/static/:name`,
    hide,
    (request: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) => {
      const asset = ASSETS[request.params.name]
      if (!asset) return reply.callNotFound()
      reply.header('content-security-policy', DOCS_CSP)
      return sendPageAsset(request, reply, asset)
    },
  )
}
