import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { html } from '../lib/html.ts'
import type { NotFoundPage } from '../plugins/error-handler.ts'
import { APP_PATHS } from './app-paths.ts'

// The app (docs/app.md): one HTML page for every screen, the bundle esbuild made
// (scripts/build-app.ts → dist/app), the web app manifest and the service worker.
//
// Files are read once at start and kept in memory with their gzip and Brotli forms (made by
// the build, `<file>.br` / `<file>.gz`): the whole app is a few hundred kilobytes, and a room
// of wall screens asks for it again and again.

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

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml; charset=utf-8',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
}

interface StaticFile {
  type: string
  body: Buffer
  gzip?: Buffer
  br?: Buffer
  /** Hashed names never change content: caches may keep them for ever. */
  immutable: boolean
}

/** A file of the build, with the compressed forms the build made of it (if any). */
function staticFile(name: string, immutable: boolean): StaticFile {
  const full = path.join(DIST, name)
  const read = (suffix: string) =>
    existsSync(`${full}${suffix}`) ? readFileSync(`${full}${suffix}`) : undefined
  const gzip = read('.gz')
  const br = read('.br')
  return {
    type: TYPES[path.extname(name)] ?? 'application/octet-stream',
    body: readFileSync(full),
    immutable,
    ...(gzip && { gzip }),
    ...(br && { br }),
  }
}

/** Every file under dir, by its path relative to it (with forward slashes). */
function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name)
    return statSync(full).isDirectory() ? walk(full, `${prefix}${name}/`) : [`${prefix}${name}`]
  })
}

interface Build {
  js: string
  css: string | null
  preload: string[]
  files: Map<string, StaticFile>
}

function loadBuild(): Build | null {
  const manifest = path.join(DIST, 'build.json')
  if (!existsSync(manifest)) return null
  const { js, css, preload } = JSON.parse(readFileSync(manifest, 'utf8')) as Omit<Build, 'files'>
  const files = new Map<string, StaticFile>()
  for (const name of walk(DIST)) {
    if (name === 'build.json' || /\.(br|gz)$/.test(name)) continue
    // esbuild's names carry a content hash (`main-ABCD1234.js`, `chunks/…`)
    const hashed = /-[A-Z0-9]{8}\.[a-z]+(\.map)?$/.test(name)
    files.set(name, staticFile(name, hashed))
  }
  return { js, css, preload, files }
}

function send(
  request: FastifyRequest,
  reply: FastifyReply,
  file: StaticFile,
  cacheControl: string,
) {
  const accepts = String(request.headers['accept-encoding'] ?? '')
  const [encoding, body] =
    file.br && /\bbr\b/.test(accepts)
      ? ['br', file.br]
      : file.gzip && /\bgzip\b/.test(accepts)
        ? ['gzip', file.gzip]
        : [null, file.body]
  reply.headers({
    'content-type': file.type,
    'cache-control': cacheControl,
    'x-content-type-options': 'nosniff',
    vary: 'accept-encoding',
  })
  if (encoding) reply.header('content-encoding', encoding)
  return reply.send(body)
}

const IMMUTABLE = 'public, max-age=31536000, immutable'

/** The page every screen loads; the app draws the rest. */
const appPage = (build: Build) =>
  html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="theme-color" content="#1d4ed8">
<meta name="description" content="statusd: short statuses (a room free or busy, a build, who is away) set from anywhere, shown live, shared by link, on a wall or as a badge.">
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
<div id="app"><noscript>statusd's app needs JavaScript. Statuses can still be read on their share pages and set through the API (/docs).</noscript></div>
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
  const page = build ? appPage(build) : NOT_BUILT

  const sendPage = (_request: FastifyRequest, reply: FastifyReply, code = 200) =>
    reply
      .code(build ? code : 503)
      .headers({
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': APP_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'same-origin',
        'cache-control': 'no-cache',
      })
      .send(page)
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

  // the service worker's URL is its identity: fixed, never cached long, at the root so that
  // its scope is the whole app
  app.get('/sw.js', { schema: { hide: true } }, (request, reply) => {
    const file = build?.files.get('sw.js')
    if (!file) return reply.code(404).type('text/plain; charset=utf-8').send('not built\n')
    return send(request, reply, file, 'no-cache')
  })

  app.get<{ Params: { '*': string } }>('/app/*', { schema: { hide: true } }, (request, reply) => {
    const file = build?.files.get(request.params['*'])
    if (!file || request.params['*'] === 'sw.js')
      return reply.code(404).type('text/plain; charset=utf-8').send('not found\n')
    return send(request, reply, file, file.immutable ? IMMUTABLE : 'public, max-age=86400')
  })
}
