import assert from 'node:assert/strict'
import { beforeEach, describe, it, type TestContext } from 'node:test'
import {
  apiRoutes,
  fillUrl,
  makeWorld,
  ownerParams,
  plausibleBody,
  snapshot,
  type World,
} from './world.ts'

// OWASP API5:2023 Broken Function Level Authorization. Administrative functions (creating
// users, setting plans, verifying users, managing anyone's keys) exist only in the admin CLI,
// which works on the database directly, and under `/v1/admin/`, for operators only
// (docs/operations.md#operators): every route there refuses anyone else. Over HTTP an
// unverified user may only check their key and manage their own keys; everything else needs
// a verified user (403 notVerified). Method-override headers do not change the method.

let w: World
// note: beforeEach is given the context of the test it runs for
beforeEach(async (t) => {
  w = await makeWorld(t as TestContext)
})

/**
 * Routes open to unverified users (docs/api.md#authentication: checkAuth; key and passkey
 * management, docs/security.md; their own profile and sessions, docs/accounts.md#users).
 */
const FOR_UNVERIFIED = [
  'GET /v1/checkAuth',
  'GET /v1/user/api-keys',
  'POST /v1/user/api-keys',
  'DELETE /v1/user/api-keys/:keyId',
  'POST /v1/user/api-keys/:keyId/rotate',
  'POST /v1/user/api-keys/revoke-all',
  // invitations made to you (docs/accounts.md#invitations): you may answer them unverified
  'GET /v1/user/invitations',
  'POST /v1/user/invitations/:id/accept',
  'POST /v1/user/invitations/:id/decline',
  'POST /v1/invitations/:token/accept',
  // your own profile and sessions (docs/accounts.md#users)
  'GET /v1/user',
  'PATCH /v1/user',
  'GET /v1/user/sessions',
  'DELETE /v1/user/sessions',
  'DELETE /v1/user/sessions/:sessionId',
  // your own passkeys (docs/accounts.md#passkeys)
  'POST /v1/user/passkeys/registration-options',
  'POST /v1/user/passkeys',
  'GET /v1/user/passkeys',
  'PATCH /v1/user/passkeys/:passkeyId',
  'DELETE /v1/user/passkeys/:passkeyId',
  // a new link to confirm one's own address (docs/accounts.md#e-mail)
  'POST /v1/user/email/verification',
  // your own security log (docs/security.md#security-log)
  'GET /v1/user/security-events',
  // your own data (docs/accounts.md#export-your-data)
  'GET /v1/user/export',
  // leaving: your own account, from a session (docs/accounts.md#delete-your-account)
  'DELETE /v1/user',
]

describe('levels', () => {
  it('every /v1 route except the listed ones refuses an unverified user with 403 notVerified, changing nothing', async () => {
    const routes = apiRoutes(w.t)
    const open = routes.map((r) => `${r.method} ${r.url}`).filter((r) => FOR_UNVERIFIED.includes(r))
    assert.deepEqual(open.sort(), [...FOR_UNVERIFIED].sort(), 'the open routes exist')
    for (const route of routes) {
      const name = `${route.method} ${route.url}`
      if (FOR_UNVERIFIED.includes(name)) continue
      const before = await snapshot(w.t)
      const url = fillUrl(route.url, ownerParams(w))
      const res = await w.t.request(w.unverified, route.method as 'GET', url, plausibleBody(route))
      assert.equal(res.statusCode, 403, `${name}: ${res.body}`)
      assert.equal(res.json().errorCode, 'notVerified', name)
      assert.equal(await snapshot(w.t), before, name)
    }
  })

  it('the routes open to unverified users only ever touch their own keys', async () => {
    const keys = (await w.t.request(w.unverified, 'GET', '/v1/user/api-keys')).json()
    assert.equal(keys.length, 1)
    const check = (await w.t.request(w.unverified, 'GET', '/v1/checkAuth')).json()
    assert.equal(check.authLevel, 'authenticated')
    assert.equal(check.userId, w.unverified.id)
  })
})

describe('no administrative function over HTTP but the operators’', () => {
  it('the inventory has no route for users, plans, verification or anyone else’s keys outside /v1/admin/', () => {
    // note: confirming one's own e-mail address with a token mailed to it is no admin
    // function (docs/accounts.md#e-mail): those routes are the exception; the operators' own
    // are under /v1/admin/ (docs/operations.md#operators), each checked below
    const mailedTokens =
      /^(\/v1\/auth\/verify-email|\/v1\/user\/email\/verification|\/auth\/verify\/:token)$/
    const operators = /^\/v1\/admin\//
    // the app's operators' screens: the same page as every screen, its data from /v1/admin/
    const appScreen = (r: { method: string; url: string }) =>
      (r.method === 'GET' || r.method === 'HEAD') && /^\/admin(\/[a-z]+)?$/.test(r.url)
    for (const route of w.t.app
      .routeInventory()
      .filter((r) => !mailedTokens.test(r.url) && !operators.test(r.url) && !appScreen(r)))
      assert.doesNotMatch(
        route.url,
        /admin|^\/v1\/users\b|\/plans?\b|verif|:userId\/api-keys|\/user\/(plan|verified)/i,
        `${route.method} ${route.url}`,
      )
  })

  it("every operators' route refuses a verified user who is not one: 403 forbidden, changing nothing", async () => {
    const admin = apiRoutes(w.t).filter((r) => r.url.startsWith('/v1/admin/'))
    assert.ok(admin.length > 0, 'there are operators’ routes')
    for (const route of admin) {
      const before = await snapshot(w.t)
      const url = fillUrl(route.url, ownerParams(w))
      const res = await w.t.request(w.owner, route.method as 'GET', url, plausibleBody(route))
      assert.equal(res.statusCode, 403, `${route.method} ${route.url}: ${res.body}`)
      assert.equal(res.json().errorCode, 'forbidden', route.url)
      assert.equal(await snapshot(w.t), before, route.url)
    }
  })

  it('plausible admin paths answer 404 and change nothing', async () => {
    const before = await snapshot(w.t)
    for (const [method, url, body] of [
      ['POST', '/v1/users', { name: 'Mallory', plan: 'pro' }],
      ['GET', '/v1/users', undefined],
      ['PATCH', `/v1/users/${w.unverified.id}`, { verified: true }],
      ['PUT', '/v1/user/plan', { plan: 'unlimited' }],
      ['POST', '/v1/user/verify', {}],
      ['POST', '/v1/admin/users', { name: 'Mallory' }],
      ['GET', `/v1/users/${w.owner.id}/api-keys`, undefined],
      ['POST', `/v1/users/${w.owner.id}/api-keys`, {}],
    ] as const) {
      const res = await w.t.request(w.owner, method, url, body)
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`)
    }
    assert.equal(await snapshot(w.t), before)
  })

  it('an unverified user cannot verify themselves or change their plan through any body', async () => {
    for (const body of [{ verified: true }, { authLevel: 'verified' }, { plan: 'unlimited' }]) {
      for (const [method, url] of [
        ['POST', '/v1/user/api-keys'],
        ['PATCH', '/v1/user'],
      ] as const) {
        const res = await w.t.request(w.unverified, method, url, body)
        assert.equal(res.statusCode, 400, `${method} ${url} ${JSON.stringify(body)}`)
      }
    }
    const check = (await w.t.request(w.unverified, 'GET', '/v1/checkAuth')).json()
    assert.equal(check.authLevel, 'authenticated')
  })
})

describe('method overrides', () => {
  it('X-HTTP-Method-Override and _method do not turn a request into another method', async () => {
    const url = `/v1/status/${w.ownerIds.publicStatus}`
    for (const header of ['x-http-method-override', 'x-http-method', 'x-method-override']) {
      const res = await w.t.request(w.stranger, 'GET', url, undefined, { [header]: 'DELETE' })
      assert.equal(res.statusCode, 200, header)
      const post = await w.t.request(w.owner, 'POST', url, { value: 'X' }, { [header]: 'DELETE' })
      assert.equal(post.statusCode, 404, `${header}: there is no POST route`)
    }
    const res = await w.t.request(w.owner, 'GET', `${url}?_method=DELETE`)
    assert.equal(res.statusCode, 200)
    assert.equal((await w.t.request(w.owner, 'GET', url)).json().value, 'OPEN', 'still there')
  })
})
