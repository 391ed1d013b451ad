import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { APP_PATHS } from '../../src/web/app-paths.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'

// OWASP API9:2023 Improper Inventory Management. The OpenAPI document is generated from the
// same schemas that validate, and this test holds it to the router: every registered route
// is in /openapi.json and every documented operation is a registered route. The API is
// versioned in its path (/v1); outside it only the operations endpoints, the docs and the
// share pages (docs/sharing.md#share-page-and-badge) exist;
// only the docs UI and the document itself are hidden from it.

let t: TestApp
// biome-ignore lint/suspicious/noExplicitAny: the parsed OpenAPI document, read by the assertions
let doc: any
const suite = suiteLifetime()
before(async () => {
  t = await makeApp(suite)
  doc = (await t.app.inject({ url: '/openapi.json' })).json()
})

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
const toOpenApi = (url: string) => url.replace(/:(\w+)/g, '{$1}')

/** "METHOD /path" of every operation in the document. */
const documented = () =>
  Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
    Object.keys(ops)
      .filter((m) => METHODS.includes(m))
      .map((m) => `${m.toUpperCase()} ${p}`),
  )

/** "METHOD /path" of every registered route, HEAD twins and hidden ones left out. */
const registered = () =>
  t.app
    .routeInventory()
    .filter((r) => r.method !== 'HEAD' && !r.hidden)
    .map((r) => `${r.method} ${toOpenApi(r.url)}`)

describe('the OpenAPI document and the router agree', () => {
  it('is OpenAPI 3.1', () => assert.equal(doc.openapi, '3.1.0'))

  it('every registered route is documented', () => {
    const docs = new Set(documented())
    for (const route of registered()) assert.ok(docs.has(route), `${route} is not in /openapi.json`)
  })

  it('every documented operation is a registered route', () => {
    const routes = new Set(registered())
    for (const op of documented()) assert.ok(routes.has(op), `${op} is documented but not served`)
  })

  it('only the docs UI, the document itself, page assets and the app are hidden', () => {
    // note: /s/assets/ and /b/assets/ serve the share and wall pages' stylesheets, scripts and
    // icons; the app's screens, files, manifest and service worker (docs/app.md) and the embed's
    // module (docs/sharing.md#embeds) are not API
    const app = new Set<string>(APP_PATHS)
    for (const r of t.app.routeInventory().filter((r) => r.hidden && !app.has(r.url)))
      assert.match(
        r.url,
        /^\/docs(\/|$)|^\/openapi\.json$|^\/s\/assets\/|^\/b\/assets\/|^\/app\/\*$|^\/manifest\.webmanifest$|^\/sw\.js$|^\/embed\.js$/,
        `${r.method} ${r.url} is hidden`,
      )
  })

  it('every /v1 operation names its security, a summary and its error responses', () => {
    type Operation = { summary?: string; security?: unknown[]; responses: Record<string, unknown> }
    for (const [p, ops] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      if (!p.startsWith('/v1/')) continue
      for (const [m, op] of Object.entries(ops)) {
        if (!METHODS.includes(m)) continue
        const what = `${m.toUpperCase()} ${p}`
        assert.ok(op.summary, `${what} has a summary`)
        // the share views are anonymous by design (docs/sharing.md#public-views-no-api-key), as
        // are what an invitation link offers (docs/accounts.md#invitation-links), signing up,
        // in and out (docs/accounts.md#signing-in) and the views through a private share link
        // (docs/accounts.md#private-share-links), whose token is the credential: an explicit
        // empty list says so
        const anonymous =
          p.startsWith('/v1/share/') ||
          p.startsWith('/v1/auth/') ||
          what === 'GET /v1/invitations/{token}' ||
          /^\/v1\/share-links\/\{token\}(\/(history|users|events))?$/.test(p)
        assert.ok(
          Array.isArray(op.security) && (anonymous || op.security.length > 0),
          `${what} names its security`,
        )
        assert.ok(op.responses['4XX'], `${what} documents its errors`)
      }
    }
  })
})

describe('versions', () => {
  it('every API route is under /v1; outside it only operations, docs, pages and the app', () => {
    const app = new Set<string>(APP_PATHS)
    for (const r of t.app.routeInventory()) {
      if (r.url.startsWith('/v1/') || app.has(r.url)) continue
      assert.match(
        r.url,
        // the share pages (/s/:shareId, its badge; docs/sharing.md#share-page-and-badge), the
        // page an invitation link opens (docs/accounts.md#invitation-links), the pages
        // e-mailed and printed links open (docs/accounts.md#e-mail, docs/notifications.md#e-mail) and the pages of private
        // share links (/l/:token, its badge; docs/accounts.md#private-share-links) are the
        // other public surfaces
        /^\/(healthz|readyz|metrics|openapi\.json|docs(\/.*)?|s\/.+|invite\/.+|auth\/(verify|reset|link|channel)\/:token|l\/.+|b\/.+|app\/\*|manifest\.webmanifest|sw\.js|embed\.js)$/,
        `${r.method} ${r.url} is outside /v1`,
      )
    }
  })

  it('no other version is served: /v0 and /v2 are 404', async () => {
    for (const url of ['/v0/checkAuth', '/v2/checkAuth', '/api/v1/checkAuth'])
      assert.equal((await t.app.inject({ url })).statusCode, 404, url)
  })
})
