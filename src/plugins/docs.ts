import { readFileSync } from 'node:fs'
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import Fastify from 'fastify'
import fp from 'fastify-plugin'

const PREFIX = '/docs'
/**
 * The policy of every /docs response: Swagger UI's own scripts, styles and images only, the
 * document and "Try it out" requests to this origin, no inline script, never framed (a page
 * that sends requests with a pasted key must not be clickjacked). note: the one inline style
 * Swagger UI renders, the colours of its logo's SVG, is allowed by its hash; a new version of
 * Swagger UI with another one shows as a violation in test/browser/docs-page.test.ts.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')
const theme = (path: string) => readFileSync(new URL(path, import.meta.url))

/**
 * Swagger UI as statusd's API reference (docs/api.md#api-reference-page): our name and logo, no
 * top bar (its "Explore" box loaded any URL), no deep-link anchors inside the operations'
 * buttons (a control inside a control), no validator badge (an image from another site), and
 * our stylesheet and script for contrast, landmarks and labels. Everything from this origin.
 */
const SWAGGER_UI_OPTIONS = {
  routePrefix: PREFIX,
  // note: false is how the plugin spells null (its default, said out loud)
  validatorUrl: false,
  uiConfig: {
    layout: 'BaseLayout',
    deepLinking: false,
    // the top bar's "Explore" box is gone with the layout, and so is its plugin
    plugins: [],
    defaultModelsExpandDepth: 0,
    syntaxHighlight: false,
  },
  theme: {
    title: 'statusd API reference',
    css: [{ filename: 'statusd.css', content: theme('./docs-theme/docs.css').toString() }],
    js: [{ filename: 'statusd.js', content: theme('./docs-theme/docs.js').toString() }],
    favicon: [
      {
        filename: 'logo.svg',
        rel: 'icon',
        sizes: 'any',
        type: 'image/svg+xml',
        content: theme('../web/assets/favicon.svg'),
      },
    ],
  },
} satisfies FastifySwaggerUiOptions

// hop-by-hop or recomputed headers: never copied from the inner answer
const SKIPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length'])

/**
 * GET /docs: Swagger UI over the app's own OpenAPI document. Swagger UI (with
 * @fastify/static under it) is loaded on the first request, in an inner Fastify instance
 * the routes here forward to: few people open /docs, and loading it at start cost a tenth
 * of statusd's cold start (docs/performance.md).
 */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  let inner: Promise<FastifyInstance> | undefined

  async function build(): Promise<FastifyInstance> {
    const { default: swaggerUi } = await import('@fastify/swagger-ui')
    const docs = Fastify()
    // the UI's /docs/json and /docs/yaml serve the app's document, decorated under the name
    // of the plugin the UI depends on
    const [json, yaml] = await Promise.all([
      app.openApiDocument(),
      app.openApiDocument({ yaml: true }),
    ])
    const swagger = ((opts?: { yaml?: boolean }) =>
      opts?.yaml ? yaml : json) as FastifyInstance['swagger']
    const outerDocument = fp(async (f) => void f.decorate('swagger', swagger), {
      name: '@fastify/swagger',
    })
    await docs.register(outerDocument)
    await docs.register(swaggerUi, SWAGGER_UI_OPTIONS)
    await docs.ready()
    return docs
  }

  async function forward(request: FastifyRequest, reply: FastifyReply) {
    inner ??= build().catch((err: unknown) => {
      inner = undefined
      throw err
    })
    const res = await (await inner).inject({
      method: 'GET',
      url: request.url,
      headers: {
        ...(request.headers['if-none-match'] && {
          'if-none-match': request.headers['if-none-match'],
        }),
        ...(request.headers['if-modified-since'] && {
          'if-modified-since': request.headers['if-modified-since'],
        }),
      },
    })
    // the app's own 404 (docs/api.md#errors), not the inner instance's
    if (res.statusCode === 404) return reply.callNotFound()
    if (res.statusCode >= 500)
      throw new Error(`Swagger UI failed on ${request.url}: ${res.payload}`)
    for (const [name, value] of Object.entries(res.headers))
      if (value !== undefined && !SKIPPED.has(name)) reply.header(name, value)
    reply.header('content-security-policy', DOCS_CSP)
    return reply.code(res.statusCode).send(res.rawPayload)
  }

  const hide = { schema: { hide: true } }
  app.get(PREFIX, hide, forward)
  app.get(`${PREFIX}/*`, hide, forward)
}
