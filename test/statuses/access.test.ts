import assert from 'node:assert/strict'
import { test } from 'node:test'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type Scenario, type ScenarioContext } from '../helpers/scenarios.ts'
import { waitUntil } from '../helpers/sse.ts'

// docs/api.md#who-may-see-and-change-a-status: the owner may do everything; any verified user may
// read a public status but not change it (403 forbidden); a private status the caller has no role
// on is 404, never 403. Status keys are per owner, so the key routes only ever see the caller's
// own.
// docs/api.md#delete-a-status: DELETE is 204, takes the history along, and the status is gone.

const NO_SUCH_ID = 'doesNotExist000000000'

/** The owner's public `pub` (three value updates so far) and private `priv`; a stranger. */
async function withStatuses(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user({ name: 'Owner' })
  const stranger = await t.user({ name: 'Stranger' })
  const pub = await t.request(owner, 'POST', '/v1/status-keys/pub', {
    value: 'OPEN',
    accessType: 'public',
  })
  const priv = await t.request(owner, 'POST', '/v1/status-keys/priv', { value: 'SECRET' })
  assert.equal(pub.statusCode, 201)
  assert.equal(priv.statusCode, 201)
  for (const value of ['CLOSED', 'OPEN'])
    assert.equal((await t.request(owner, 'POST', '/v1/status-keys/pub', { value })).statusCode, 200)
  const pubNow = await t.request(owner, 'GET', `/v1/status/${pub.json().id}`)
  return {
    t,
    users: { owner, stranger },
    vars: {
      pubId: pub.json().id,
      privId: priv.json().id,
      pubBefore: pubNow.body,
      privBefore: priv.body,
    },
  }
}

async function stored(ctx: ScenarioContext, id: string) {
  return ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/status/${id}`)
}

async function assertUnchanged(ctx: ScenarioContext): Promise<void> {
  for (const which of ['pub', 'priv']) {
    const res = await stored(ctx, ctx.vars[`${which}Id`] ?? '')
    assert.equal(res.statusCode, 200, `${which} still exists`)
    assert.deepEqual(res.json(), JSON.parse(ctx.vars[`${which}Before`] ?? ''), `${which} unchanged`)
  }
}

const historyRows = (ctx: ScenarioContext, statusId: string) =>
  ctx.t.database.db
    .selectFrom('status_history')
    .select('change_no')
    .where('status_id', '=', statusId)
    .orderBy('change_no')
    .execute()

/** A deleted status: 404 by id and key, not listed, no history rows; the other one intact. */
async function assertDeleted(ctx: ScenarioContext, which: 'pub' | 'priv'): Promise<void> {
  const id = ctx.vars[`${which}Id`] ?? ''
  const owner = ctx.users.owner ?? null
  const byId = await stored(ctx, id)
  assert.equal(byId.statusCode, 404)
  assert.equal(byId.json().errorCode, 'notFound')
  assert.equal((await ctx.t.request(owner, 'GET', `/v1/status-keys/${which}`)).statusCode, 404)
  const list = (await ctx.t.request(owner, 'GET', '/v1/user/status')).json()
  assert.deepEqual(
    list.map((e: { statusKey: string }) => e.statusKey),
    [which === 'pub' ? 'priv' : 'pub'],
    'only the other status is listed',
  )
  // the sweep removes them after the delete, in batches (docs/api.md#delete-a-status)
  await waitUntil(async () => (await historyRows(ctx, id)).length === 0, 'its history is swept')
  const otherId = ctx.vars[which === 'pub' ? 'privId' : 'pubId'] ?? ''
  assert.ok((await historyRows(ctx, otherId)).length > 0, "the other status's history stays")
  const rows = await ctx.t.database.db.selectFrom('statuses').select('id').execute()
  assert.deepEqual(rows, [{ id: otherId }])
}

const assertNotFound = (body: { errorCode: string; message: string }) => {
  assert.equal(body.errorCode, 'notFound')
  assert.doesNotMatch(body.message, /forbidden|private|permission/i, 'no hint it exists')
}

runScenarios('the owner may do everything', withStatuses, [
  {
    name: 'the owner reads a private status',
    method: 'GET',
    url: '/v1/status/{privId}',
    expectStatus: 200,
    expect: (body, ctx) => assert.deepEqual(body, JSON.parse(ctx.vars.privBefore ?? '')),
  },
  {
    name: 'the owner reads their status by key',
    method: 'GET',
    url: '/v1/status-keys/priv',
    expectStatus: 200,
    expect: (body, ctx) => assert.equal(body.id, ctx.vars.privId),
  },
  {
    name: 'the owner changes every property at once',
    method: 'PATCH',
    url: '/v1/status/{privId}',
    body: {
      name: 'Renamed',
      type: 'text',
      value: 'NEW',
      accessType: 'public',
      description: 'changed',
      colorNo: 9,
      accessTypeUserList: 'public',
      accessTypeHistory: 'owner',
    },
    expectStatus: 200,
    expect: async (body, ctx) => {
      const now = (await stored(ctx, ctx.vars.privId ?? '')).json()
      assert.deepEqual(now, body)
      assert.equal(now.name, 'Renamed')
      assert.equal(now.accessType, 'public')
      assert.equal(now.accessTypeHistory, 'owner')
      assert.equal(now.changeCount, 2)
    },
  },
  {
    name: 'the owner sets a status by key',
    method: 'POST',
    url: '/v1/status-keys/priv',
    body: { value: 'AGAIN', colorNo: 2 },
    expectStatus: 200,
    expect: (body, ctx) => assert.equal(body.id, ctx.vars.privId),
  },
  {
    name: 'DELETE by id is 204 with no body, and the status and its history are gone',
    method: 'DELETE',
    url: '/v1/status/{pubId}',
    expectStatus: 204,
    expect: async (body, ctx, res) => {
      assert.equal(body, undefined)
      assert.equal(res.headers['content-length'] ?? '0', '0')
      await assertDeleted(ctx, 'pub')
    },
  },
  {
    name: 'DELETE by key is 204, and the status and its history are gone',
    method: 'DELETE',
    url: '/v1/status-keys/pub',
    expectStatus: 204,
    expect: async (body, ctx) => {
      assert.equal(body, undefined)
      await assertDeleted(ctx, 'pub')
    },
  },
  {
    name: 'a private status is deleted the same way',
    method: 'DELETE',
    url: '/v1/status/{privId}',
    expectStatus: 204,
    expect: (_body, ctx) => assertDeleted(ctx, 'priv'),
  },
  {
    name: 'DELETE of an unknown id is 404',
    method: 'DELETE',
    url: `/v1/status/${NO_SUCH_ID}`,
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: (_body, ctx) => assertUnchanged(ctx),
  },
  {
    name: 'DELETE of an unknown key is 404',
    method: 'DELETE',
    url: '/v1/status-keys/nothing',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: (_body, ctx) => assertUnchanged(ctx),
  },
])

runScenarios('another verified user on a public status', withStatuses, [
  {
    name: "may read it (200, the Status the owner sees, without the owner's statusKey)",
    as: 'stranger',
    method: 'GET',
    url: '/v1/status/{pubId}',
    expectStatus: 200,
    // docs/api.md#the-status-object: the status key is the owner's alone
    expect: (body, ctx) =>
      assert.deepEqual(body, {
        ...JSON.parse(ctx.vars.pubBefore ?? ''),
        statusKey: null,
        // its user list is the owner's alone (docs/api.md#the-status-object)
        subscriberCount: null,
      }),
  },
  ...[{ value: 'HACKED' }, { name: 'Hacked name' }, { accessType: 'private' }, { colorNo: 2 }].map(
    (body): Scenario => ({
      name: `may not change it: PATCH ${Object.keys(body)[0]} is 403 forbidden`,
      as: 'stranger',
      method: 'PATCH',
      url: '/v1/status/{pubId}',
      body,
      expectStatus: 403,
      expectErrorCode: 'forbidden',
      expect: async (_body, ctx) => {
        await assertUnchanged(ctx)
        assert.equal((await historyRows(ctx, ctx.vars.pubId ?? '')).length, 3, 'no history row')
      },
    }),
  ),
  {
    name: 'may not delete it: DELETE is 403 forbidden',
    as: 'stranger',
    method: 'DELETE',
    url: '/v1/status/{pubId}',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
    expect: (_body, ctx) => assertUnchanged(ctx),
  },
  {
    name: "cannot reach it by the owner's key: POST creates the caller's own status",
    as: 'stranger',
    method: 'POST',
    url: '/v1/status-keys/pub',
    body: { value: 'MINE' },
    expectStatus: 201,
    expect: async (body, ctx) => {
      assert.notEqual(body.id, ctx.vars.pubId)
      assert.equal(body.changeCount, 1)
      await assertUnchanged(ctx)
    },
  },
  {
    name: "cannot read it by the owner's key: GET /v1/status-keys is 404",
    as: 'stranger',
    method: 'GET',
    url: '/v1/status-keys/pub',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: "cannot delete it by the owner's key: DELETE /v1/status-keys is 404",
    as: 'stranger',
    method: 'DELETE',
    url: '/v1/status-keys/pub',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: (_body, ctx) => assertUnchanged(ctx),
  },
  {
    name: 'does not see it in their own list',
    as: 'stranger',
    method: 'GET',
    url: '/v1/user/status',
    expectStatus: 200,
    expect: (body) => assert.deepEqual(body, []),
  },
])

runScenarios('another verified user on a private status: 404, never 403', withStatuses, [
  ...(
    [
      ['GET', undefined],
      ['PATCH', { value: 'HACKED' }],
      ['PATCH', { name: 'Hacked name' }],
      ['DELETE', undefined],
    ] as const
  ).map(
    ([method, body]): Scenario => ({
      name: `${method}${body ? ` ${Object.keys(body)[0]}` : ''} is 404 notFound, like an id that does not exist`,
      as: 'stranger',
      method,
      url: '/v1/status/{privId}',
      body,
      expectStatus: 404,
      expectErrorCode: 'notFound',
      expect: async (res, ctx) => {
        assertNotFound(res)
        const missing = await ctx.t.request(
          ctx.users.stranger ?? null,
          method,
          `/v1/status/${NO_SUCH_ID}`,
          body,
        )
        assert.equal(missing.statusCode, 404)
        assert.deepEqual(
          { ...res, requestId: null },
          { ...missing.json(), requestId: null },
          'the same answer as for an id that does not exist',
        )
        await assertUnchanged(ctx)
      },
    }),
  ),
  ...(['GET', 'DELETE'] as const).map(
    (method): Scenario => ({
      name: `${method} by the owner's key is 404 (the caller's own namespace)`,
      as: 'stranger',
      method,
      url: '/v1/status-keys/priv',
      expectStatus: 404,
      expectErrorCode: 'notFound',
      expect: async (res, ctx) => {
        assertNotFound(res)
        await assertUnchanged(ctx)
      },
    }),
  ),
])

test('visibility follows accessType as it changes', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const stranger = await t.user()
  const id = (await t.request(owner, 'POST', '/v1/status-keys/door', { value: 'SHUT' })).json().id
  assert.equal((await t.request(stranger, 'GET', `/v1/status/${id}`)).statusCode, 404)
  await t.request(owner, 'PATCH', `/v1/status/${id}`, { accessType: 'public' })
  const seen = await t.request(stranger, 'GET', `/v1/status/${id}`)
  assert.equal(seen.statusCode, 200)
  assert.equal(seen.json().value, 'SHUT')
  assert.equal(
    (await t.request(stranger, 'PATCH', `/v1/status/${id}`, { value: 'OPEN' })).statusCode,
    403,
  )
  await t.request(owner, 'PATCH', `/v1/status/${id}`, { accessType: 'private' })
  assert.equal((await t.request(stranger, 'GET', `/v1/status/${id}`)).statusCode, 404)
  assert.equal(
    (await t.request(stranger, 'PATCH', `/v1/status/${id}`, { value: 'OPEN' })).statusCode,
    404,
  )
})

test('a deleted key can be used again: a new status, history from 1', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const first = (await t.request(owner, 'POST', '/v1/status-keys/lamp', { value: 'ON' })).json()
  await t.request(owner, 'POST', '/v1/status-keys/lamp', { value: 'OFF' })
  assert.equal((await t.request(owner, 'DELETE', '/v1/status-keys/lamp')).statusCode, 204)
  assert.equal((await t.request(owner, 'DELETE', '/v1/status-keys/lamp')).statusCode, 404)
  const again = await t.request(owner, 'POST', '/v1/status-keys/lamp', { value: 'ON' })
  assert.equal(again.statusCode, 201)
  assert.notEqual(again.json().id, first.id)
  assert.notEqual(again.json().shareId, first.shareId)
  assert.equal(again.json().changeCount, 1)
  const rows = await t.database.db
    .selectFrom('status_history')
    .select(['status_id', 'change_no'])
    .execute()
  assert.deepEqual(rows, [{ status_id: again.json().id, change_no: 1 }])
  assert.equal((await t.request(owner, 'GET', `/v1/status/${first.id}`)).statusCode, 404)
})
