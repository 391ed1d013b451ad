import assert from 'node:assert/strict'
import { beforeEach, describe, it, type TestContext } from 'node:test'
import {
  apiRoutes,
  FORGED_TOKEN,
  fillUrl,
  makeWorld,
  plausibleBody,
  snapshot,
  type World,
} from './world.ts'

// OWASP API1:2023 Broken Object Level Authorization. Every route that takes an object id,
// called by a stranger with the id of someone else's object: a private status (and a key)
// must be indistinguishable from one that does not exist (404, never 403: existence does
// not leak); a public status may be read but not changed (403); nothing changes either way.
// The routes come from the app's own inventory, so a route added later is covered too.

let w: World
// note: beforeEach is given the context of the test it runs for
beforeEach(async (t) => {
  w = await makeWorld(t as TestContext)
})

/** Values for each route parameter: someone else's object, and one that does not exist. */
const foreign = (w: World) => ({
  statusId: w.ownerIds.privateStatus,
  keyId: w.ownerIds.keyId,
  sessionId: w.ownerIds.sessionId,
  // a key names a status in the caller's own namespace: the owner's key is just a string here
  statusKey: 'secret-room',
  userId: w.owner.id,
  shareId: 'zzzzzzzz',
  // note: someone else's invitation is tested in test/statuses/invitations.test.ts; a link
  // token is a bearer secret (whoever holds a real one may use it), so here it is forged
  id: 'Xdoesnotexist00000000',
  token: FORGED_TOKEN,
  passkeyId: w.ownerIds.passkeyId,
  linkId: 'Xdoesnotexist00000000',
  boardId: w.ownerIds.boardId,
})
const missing = {
  statusId: 'Xdoesnotexist00000000',
  keyId: 'Xdoesnotexist00000000',
  sessionId: 'Xdoesnotexist00000000',
  statusKey: 'no-such-key',
  userId: 'Xdoesnotexist00000000',
  shareId: 'zzzzzzzz',
  id: 'Ydoesnotexist00000000',
  token: FORGED_TOKEN,
  passkeyId: 'Xdoesnotexist00000000',
  linkId: 'Xdoesnotexist00000000',
  boardId: 'Xdoesnotexist00000000',
}

describe("a stranger and someone else's private objects", () => {
  it('every route with an id: the same answer as for an id that does not exist, and nothing changes', async (t) => {
    const routes = apiRoutes(w.t).filter((r) => r.url.includes(':'))
    assert.ok(routes.length >= 7, `routes with ids: ${routes.map((r) => r.url)}`)
    for (const route of routes) {
      const what = `${route.method} ${route.url}`
      await t.test(what, async (st) => {
        // note: a fresh world per route, so a create in the stranger's namespace cannot interfere
        const fresh = await makeWorld(st)
        const before = await snapshot(fresh.t)
        const body = plausibleBody(route)
        const theirs = await fresh.t.request(
          fresh.stranger,
          route.method as 'GET',
          fillUrl(route.url, foreign(fresh)),
          body,
        )
        const nothing = await fresh.t.request(
          fresh.stranger,
          route.method as 'GET',
          fillUrl(route.url, missing),
          body,
        )
        // the operators' routes answer 403 forbidden to anyone else before looking anything up
        // (docs/operations.md#operators): the same for every id, so it tells nothing
        if (route.url.startsWith('/v1/admin/'))
          assert.equal(theirs.json().errorCode, 'forbidden', `${what}: ${theirs.body}`)
        else assert.notEqual(theirs.statusCode, 403, `${what}: 403 would tell the object exists`)
        assert.equal(theirs.statusCode, nothing.statusCode, `${what}: ${theirs.body}`)
        if (theirs.statusCode >= 400)
          assert.equal(theirs.json().errorCode, nothing.json().errorCode, what)
        if (route.url.includes(':statusKey') && route.method === 'POST') return // created the stranger's own
        assert.equal(await snapshot(fresh.t), before, `${what} changed nothing`)
      })
    }
  })

  it("the owner's private status: GET, PATCH, DELETE by id are 404 notFound", async () => {
    const url = `/v1/status/${w.ownerIds.privateStatus}`
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { value: 'HACKED' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await w.t.request(w.stranger, method, url, body)
      assert.equal(res.statusCode, 404, `${method}: ${res.body}`)
      assert.equal(res.json().errorCode, 'notFound')
    }
    const still = await w.t.request(w.owner, 'GET', url)
    assert.equal(still.json().value, 'SECRET')
    assert.equal(still.json().changeCount, 1)
  })

  it("a status key names the caller's own status: the owner's key reaches only the stranger's namespace", async () => {
    const read = await w.t.request(w.stranger, 'GET', '/v1/status-keys/secret-room')
    assert.equal(read.statusCode, 404)
    const del = await w.t.request(w.stranger, 'DELETE', '/v1/status-keys/secret-room')
    assert.equal(del.statusCode, 404)
    const write = await w.t.request(w.stranger, 'POST', '/v1/status-keys/secret-room', {
      value: 'HIS',
    })
    assert.equal(write.statusCode, 201, 'a new status of his own')
    assert.notEqual(write.json().id, w.ownerIds.privateStatus)
    const owners = await w.t.request(w.owner, 'GET', '/v1/status-keys/secret-room')
    assert.equal(owners.json().value, 'SECRET', "the owner's status is untouched")
  })

  it("someone else's API key: DELETE and rotate are 404 and the key keeps working", async () => {
    for (const [method, url] of [
      ['DELETE', `/v1/user/api-keys/${w.ownerIds.keyId}`],
      ['POST', `/v1/user/api-keys/${w.ownerIds.keyId}/rotate`],
    ] as const) {
      const res = await w.t.request(w.stranger, method, url, method === 'POST' ? {} : undefined)
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`)
    }
    assert.equal((await w.t.request(w.owner, 'GET', '/v1/checkAuth')).statusCode, 200)
  })

  it("lists hold only the caller's own objects", async () => {
    const statuses = (await w.t.request(w.stranger, 'GET', '/v1/user/status')).json()
    assert.deepEqual(
      statuses.map((s: { statusId: string }) => s.statusId),
      [w.strangerIds.status],
    )
    const keys = (await w.t.request(w.stranger, 'GET', '/v1/user/api-keys')).json()
    assert.deepEqual(
      keys.map((k: { id: string }) => k.id),
      [w.strangerIds.keyId],
    )
  })

  it('an unverified user gets 403 notVerified for any id: no object is looked up', async () => {
    const res = await w.t.request(w.unverified, 'GET', `/v1/status/${w.ownerIds.privateStatus}`)
    assert.equal(res.statusCode, 403)
    assert.equal(res.json().errorCode, 'notVerified')
    const none = await w.t.request(w.unverified, 'GET', `/v1/status/${missing.statusId}`)
    assert.equal(none.statusCode, 403, 'the same for an id that does not exist')
  })
})

describe("a stranger and someone else's public status", () => {
  it('may read it (200), may not change or delete it (403 forbidden); nothing changes', async () => {
    const url = `/v1/status/${w.ownerIds.publicStatus}`
    const before = await snapshot(w.t)
    const read = await w.t.request(w.stranger, 'GET', url)
    assert.equal(read.statusCode, 200)
    assert.equal(read.json().value, 'OPEN')
    for (const body of [{ value: 'HACKED' }, { name: 'Hacked' }, { accessType: 'private' }]) {
      const res = await w.t.request(w.stranger, 'PATCH', url, body)
      assert.equal(res.statusCode, 403, JSON.stringify(body))
      assert.equal(res.json().errorCode, 'forbidden')
    }
    const del = await w.t.request(w.stranger, 'DELETE', url)
    assert.equal(del.statusCode, 403)
    assert.equal(del.json().errorCode, 'forbidden')
    assert.equal(await snapshot(w.t), before)
  })

  it('If-Match with the right ETag does not turn a stranger into an owner', async () => {
    const url = `/v1/status/${w.ownerIds.publicStatus}`
    const etag = String((await w.t.request(w.stranger, 'GET', url)).headers.etag)
    const res = await w.t.request(
      w.stranger,
      'PATCH',
      url,
      { value: 'HACKED' },
      { 'if-match': etag },
    )
    assert.equal(res.statusCode, 403)
  })
})
