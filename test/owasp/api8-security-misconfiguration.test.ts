import assert from 'node:assert/strict'
import { beforeEach, describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { loadConfig } from '../../src/config.ts'
import { makeApp } from '../helpers/app.ts'
import {
  apiRoutes,
  fillUrl,
  isStream,
  makeWorld,
  ownerParams,
  plausibleBody,
  type World,
} from './world.ts'

// OWASP API8:2023 Security Misconfiguration. Every API response carries no-store, nosniff, a
// deny-all CSP and no-referrer — errors included; every response at all carries nosniff. No
// CORS: the authenticated API is for programs, not for other origins' pages, so no
// Access-Control-* header is ever sent and a preflight gets no permission. No TRACE, no
// framework banner, no stack trace or SQL in any error. The default bind address is loopback.

let w: World
// note: beforeEach is given the context of the test it runs for
beforeEach(async (t) => {
  w = await makeWorld(t as TestContext)
})

const API_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
}

function assertApiHeaders(res: { headers: Record<string, unknown> }, what: string) {
  for (const [name, value] of Object.entries(API_HEADERS))
    assert.equal(res.headers[name], value, `${what}: ${name}`)
  assert.equal(res.headers['x-powered-by'], undefined, what)
  assert.equal(res.headers.server, undefined, what)
}

describe('security headers', () => {
  it('on every /v1 route, successful or not', async () => {
    for (const route of apiRoutes(w.t)) {
      if (isStream(route)) continue // a stream's headers are its own; it never ends here
      const url = fillUrl(route.url, { ...ownerParams(w), keyId: w.strangerIds.keyId })
      const ok = await w.t.request(w.owner, route.method as 'GET', url, plausibleBody(route))
      assertApiHeaders(ok, `${route.method} ${route.url} → ${ok.statusCode}`)
      const refused = await w.t.request(null, route.method as 'GET', url, plausibleBody(route))
      assert.equal(refused.statusCode, 401)
      assertApiHeaders(refused, `${route.method} ${route.url} without a key`)
    }
  })

  it('on the error paths: 400, 413, 415, 404 of a status, 429', async () => {
    const free = await w.t.user({ plan: 'free' })
    const cases = [
      await w.t.request(w.owner, 'POST', '/v1/status-keys/x', '{"value":'),
      await w.t.request(
        w.owner,
        'POST',
        '/v1/status-keys/x',
        JSON.stringify({ description: 'x'.repeat(20_000) }),
      ),
      await w.t.app.inject({
        method: 'POST',
        url: '/v1/status-keys/x',
        headers: { 'service-api-key': w.owner.key, 'content-type': 'text/plain' },
        payload: 'ON',
      }),
      await w.t.request(w.owner, 'GET', '/v1/status/nope'),
    ]
    for (let i = 0; i < 61; i++) cases.push(await w.t.request(free, 'GET', '/v1/user/status'))
    for (const res of cases) assertApiHeaders(res, `${res.statusCode}`)
    assert.deepEqual(
      [...new Set(cases.map((r) => r.statusCode))].sort(),
      [200, 400, 404, 413, 415, 429],
    )
  })

  it('nosniff on every response, outside /v1 too', async () => {
    for (const url of [
      '/healthz',
      '/readyz',
      '/metrics',
      '/openapi.json',
      '/nowhere',
      '/v1/nowhere',
    ])
      assert.equal(
        (await w.t.app.inject({ url })).headers['x-content-type-options'],
        'nosniff',
        url,
      )
  })
})

describe('CORS: none', () => {
  it('a preflight from another origin gets no permission on any /v1 route', async () => {
    for (const route of apiRoutes(w.t)) {
      const res = await w.t.app.inject({
        method: 'OPTIONS',
        url: fillUrl(route.url, {
          statusId: 'x',
          statusKey: 'x',
          keyId: 'x',
          sessionId: 'x',
          userId: 'x',
          shareId: 'x',
          id: 'x',
          linkId: 'x',
          token: 'x',
          passkeyId: 'x',
          boardId: 'x',
          name: 'x',
        }),
        headers: {
          origin: 'https://evil.example',
          'access-control-request-method': route.method,
          'access-control-request-headers': 'service-api-key, content-type',
        },
      })
      const allowed = Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))
      assert.deepEqual(allowed, [], `${route.method} ${route.url}`)
      assert.ok(res.statusCode >= 400, 'the preflight is not answered with success')
    }
  })

  it('a request with an Origin gets no Access-Control-Allow-Origin', async () => {
    const res = await w.t.request(w.owner, 'GET', '/v1/user/status', undefined, {
      origin: 'https://evil.example',
    })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['access-control-allow-origin'], undefined)
    assert.equal(res.headers['access-control-allow-credentials'], undefined)
  })
})

describe('no verbose errors', () => {
  it('TRACE is not a method here: 404, the request (and its key) not echoed', async () => {
    const res = await w.t.request(w.owner, 'TRACE', '/v1/checkAuth')
    assert.equal(res.statusCode, 404)
    assert.ok(!res.body.includes(w.owner.key))
  })

  it('a failure inside storage is 500 internalError: no stack, no SQL, no table names, no paths', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user()
    await sql`drop table status_history`.execute(t.database.db)
    const res = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'ON' })
    assert.equal(res.statusCode, 500)
    assert.deepEqual(Object.keys(res.json()).sort(), ['errorCode', 'message', 'requestId'])
    assert.equal(res.json().message, 'Internal Server Error')
    assert.doesNotMatch(res.body, /status_history|insert|sqlite|\.ts:|node_modules|at /i)
  })

  it('invalid JSON is not echoed back, nor are schema patterns', async () => {
    const res = await w.t.request(w.owner, 'POST', '/v1/status-keys/x', '{"value": <script>')
    assert.equal(res.statusCode, 400)
    assert.ok(!res.body.includes('<script>'))
    const bad = await w.t.request(w.owner, 'POST', '/v1/status-keys/x', { value: '\u0000' })
    assert.doesNotMatch(bad.body, /\\p\{|\^\(\?=/, 'no regular expression in the message')
  })
})

describe('defaults', () => {
  it('binds to 127.0.0.1 unless HOST says otherwise', () => {
    assert.equal(loadConfig({}).host, '127.0.0.1')
  })
})
