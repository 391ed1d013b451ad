import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { translator } from '../i18n/i18n.ts'
import { LANGUAGE_CODES, type Language } from '../i18n/languages.ts'
import { html } from '../lib/html.ts'
import type { NotFoundPage } from '../plugins/error-handler.ts'
import { APP_PATHS } from './app-paths.ts'
import { pageLanguage, VARY_LANGUAGE } from './page-language.ts'

// The app (docs/app.md): one HTML page for every screen, the bundle esbuild made
// (scripts/build-app.ts → dist/app), the web app manifest and the service worker. The
// bundle's files are served by @fastify/static, each in the gzip or Brotli form the build
// made of it (`<file>.br` / `<file>.gz`) when the browser takes one.

const DIST = path.resolve(import.meta.dirname, '../../dist/app')

/** Content Security Policy of the app's page: nothing inline, nothing from elsewhere. */
export const APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // QR codes are drawn as data: URLs
  "img-src 'self' data:",
  "connect-src 'self'",
  "manifest-src 'self'",
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** What build.json names: the entry script, its stylesheet, the chunks to preload. */
interface Build {
  js: string
  css: string | null
  preload: string[]
}

function loadBuild(): Build | null {
  const manifest = path.join(DIST, 'build.json')
  return existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as Build) : null
}

/** esbuild's names carry a content hash (`main-ABCD1234.js`, `chunks/…`): never a new content. */
const HASHED = /-[A-Z0-9]{8}\.[a-z]+(\.map)?(\.br|\.gz)?$/
const IMMUTABLE = 'public, max-age=31536000, immutable'

/**
 * The page every screen loads, in `lang` (the browser's, web/page-language.ts) until the app
 * picks its own (docs/languages.md); the app draws the rest.
 */
const appPage = (build: Build, lang: Language) =>
  html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="theme-color" content="#1d4ed8">
<meta name="description" content="${translator(lang)('page.app.description')}">
<meta name="referrer" content="same-origin">
<title>statusd</title>
<link rel="manifest" href="/manifest.webmanifest">
<link rel="icon" href="/app/icon.svg" type="image/svg+xml">
${build.css ? html`<link rel="stylesheet" href="/app/${build.css}">` : ''}
<script type="module" src="/app/${build.js}"></script>
${build.preload.map(
  (file) => html`<link rel="modulepreload" href="/app/${file}">
`,
)}
</head>
<body>
<div id="app"><noscript>${translator(lang)('page.app.noscript')}</noscript></div>
</body>
</html>
`.value

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>statusd</title></head>
<body><main><h1>The app is not built</h1><p>Run <code>npm run build</code> (it runs by itself in <code>npm ci</code>) and restart statusd.</p></main></body></html>
`

/** The web app manifest (docs/app.md#installing-the-app). */
const WEB_MANIFEST = `${JSON.stringify(
  {
    name: 'statusd',
    short_name: 'statusd',
    description: 'Your statuses, live.',
    start_url: '/',
    scope: '/',
    display: 'standalone',
    background_color: '#ffffff',
    theme_color: '#1d4ed8',
    icons: [
      { src: '/app/icon.svg', sizes: 'any', type: 'image/svg+xml', purpose: 'any' },
      { src: '/app/icon-maskable.svg', sizes: 'any', type: 'image/svg+xml', purpose: 'maskable' },
      { src: '/app/icon-192.png', sizes: '192x192', type: 'image/png' },
      { src: '/app/icon-512.png', sizes: '512x512', type: 'image/png' },
    ],
  },
  null,
  2,
)}\n`

export const appRoutes: FastifyPluginAsync<{ notFoundPage?: NotFoundPage }> = async (
  app,
  options,
) => {
  const build = loadBuild()
  if (!build) app.log.warn('the app is not built (dist/app is missing): run npm run build')
  // one page per language, made once
  const pages = new Map(
    LANGUAGE_CODES.map((lang) => [lang, build ? appPage(build, lang) : NOT_BUILT]),
  )

  const sendPage = (request: FastifyRequest, reply: FastifyReply, code = 200) =>
    reply
      .code(build ? code : 503)
      .headers({
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': APP_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'same-origin',
        'cache-control': 'no-cache',
        ...VARY_LANGUAGE,
      })
      .send(pages.get(pageLanguage(request)))
  for (const url of APP_PATHS)
    app.get(url, { schema: { hide: true } }, (request, reply) => sendPage(request, reply))
  // a browser's unknown address (docs/app.md#screens): the app's page with a 404, whose
  // router shows its not-found screen, instead of the API's JSON (plugins/error-handler.ts)
  if (options.notFoundPage && build)
    options.notFoundPage.send = (request, reply) => sendPage(request, reply, 404)

  app.get('/manifest.webmanifest', { schema: { hide: true } }, (_request, reply) =>
    reply
      .headers({
        'content-type': 'application/manifest+json; charset=utf-8',
        'cache-control': 'public, max-age=3600',
      })
      .send(WEB_MANIFEST),
  )

  if (!build) return
  await app.register(fastifyStatic, {
    root: DIST,
    prefix: '/app/',
    preCompressed: true,
    index: false,
    // not the compressed forms or build.json themselves, the service worker only at /sw.js,
    // the embed only at /embed.js
    allowedPath: (name) => !/\.(br|gz)$|^\/(build\.json|sw\.js|embed\.js)$/.test(name),
    cacheControl: false,
    setHeaders: (reply, file) =>
      reply.headers({
        'x-content-type-options': 'nosniff',
        'cache-control': /\/(sw|embed)\.js(\.br|\.gz)?$/.test(file)
          ? 'no-cache'
          : HASHED.test(file)
            ? IMMUTABLE
            : 'public, max-age=86400',
      }),
  })
  // the service worker's URL is its identity: fixed, never cached long, at the root so that
  // its scope is the whole app
  app.get('/sw.js', { schema: { hide: true } }, (_request, reply) => reply.sendFile('sw.js'))
  // the embed (docs/sharing.md#embeds): a module other sites' pages load, so it answers
  // cross-origin reads (a module script is fetched with CORS); no credentials involved
  app.get('/embed.js', { schema: { hide: true } }, (_request, reply) =>
    reply
      .headers({
        'access-control-allow-origin': '*',
        'cross-origin-resource-policy': 'cross-origin',
      })
      .sendFile('embed.js'),
  )
}
