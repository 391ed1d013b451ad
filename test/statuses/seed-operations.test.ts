import assert from 'node:assert/strict'
import { test } from 'node:test'
import { makeApp, TEST_PLANS } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runReadOnlyScenarios, runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'

/** An owner with one status created by key `room-4` (value OCCUPIED), and a stranger. */
async function withOneStatus(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const stranger = await t.user()
  const res = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'OCCUPIED' })
  assert.equal(res.statusCode, 201)
  return { t, users: { owner, stranger }, vars: { statusId: res.json().id } }
}

const readBack = async (ctx: ScenarioContext) => {
  const res = await ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/status/${ctx.vars.statusId}`)
  return res.json()
}

runScenarios('PATCH /v1/status/:statusId (update a status by id)', withOneStatus, [
  {
    name: 'a body holding only value is a valid request',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: 'FREE' },
    expectStatus: 200,
    expect: (body) => {
      assert.equal(body.value, 'FREE')
      assert.equal(body.changeCount, 2)
    },
  },
  {
    name: 'only the properties sent change (partial update)',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { colorNo: 5 },
    expectStatus: 200,
    expect: (body) => {
      assert.equal(body.colorNo, 5)
      assert.equal(body.value, 'OCCUPIED')
      assert.equal(body.name, 'room-4')
      assert.equal(body.changeCount, 1, 'no value sent: not a value update')
    },
  },
  {
    name: 'sending a value equal to the stored one is an update',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: 'OCCUPIED' },
    expectStatus: 200,
    expect: (body) => {
      assert.equal(body.changeCount, 2)
      assert.notEqual(body.valueUpdatedAt, body.createdAt)
    },
  },
  {
    name: 'the response is the full Status object',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { name: 'Meeting room 4', accessType: 'public', description: 'Floor 2' },
    expectStatus: 200,
    expect: (body, ctx) => {
      assert.deepEqual(Object.keys(body).sort(), [
        'accessType',
        'accessTypeHistory',
        'accessTypeUserList',
        'changeCount',
        'colorNo',
        'createdAt',
        'description',
        'id',
        'listed',
        'name',
        'palette',
        'shareId',
        'stale',
        'staleAfter',
        'staleSince',
        'statusKey',
        'subscriberCount',
        'type',
        'updatedAt',
        'value',
        'valueAfter',
        'valueUntil',
        'valueUpdatedAt',
      ])
      assert.equal(body.id, ctx.vars.statusId)
      assert.match(body.id, /^[A-Za-z0-9_-]{21}$/, '21 URL-safe characters')
      for (const field of ['createdAt', 'updatedAt', 'valueUpdatedAt'])
        assert.match(
          body[field],
          /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
          `${field} is RFC 3339 UTC`,
        )
      assert.match(body.shareId, /^[a-z2-7]{8}$/)
      assert.equal(body.statusKey, 'room-4')
    },
  },
  {
    name: 'a body with no property is invalid (emptyBody)',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: {},
    expectStatus: 400,
    expectErrorCode: 'emptyBody',
  },
  {
    name: 'a request without a body is invalid (emptyBody)',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    expectStatus: 400,
    expectErrorCode: 'emptyBody',
  },
  {
    name: 'an unknown status id answers 404 notFound',
    method: 'PATCH',
    url: '/v1/status/doesNotExist000000000',
    body: { value: 'X' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: "another user's private status answers 404, never 403",
    as: 'stranger',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: 'X' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => assert.equal((await readBack(ctx)).value, 'OCCUPIED'),
  },
])

runScenarios('POST /v1/status-keys/:statusKey (set a status by key)', withOneStatus, [
  {
    name: 'an unknown key creates the status: 201 with Location',
    method: 'POST',
    url: '/v1/status-keys/build-main',
    body: { value: 'PASSING' },
    expectStatus: 201,
    expect: (body, _ctx, res) => {
      assert.equal(res.headers.location, `/v1/status/${body.id}`)
      assert.equal(body.statusKey, 'build-main')
      assert.equal(body.changeCount, 1)
    },
  },
  {
    name: 'a known key updates the status: 200, same id',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: { value: 'FREE' },
    expectStatus: 200,
    expect: (body, ctx) => {
      assert.equal(body.id, ctx.vars.statusId)
      assert.equal(body.value, 'FREE')
      assert.equal(body.changeCount, 2)
    },
  },
  {
    name: 'defaults on create: private, colour 1, empty description, name from the key',
    method: 'POST',
    url: '/v1/status-keys/order-1234',
    body: { value: 'TODAY' },
    expectStatus: 201,
    expect: (body) => {
      assert.equal(body.name, 'order-1234')
      assert.equal(body.type, 'text')
      assert.equal(body.accessType, 'private')
      assert.equal(body.description, '')
      assert.equal(body.colorNo, 1)
      assert.equal(body.accessTypeUserList, 'owner')
      assert.equal(body.accessTypeHistory, 'private')
    },
  },
  {
    name: 'a status created without a value has value null and changeCount 0',
    method: 'POST',
    url: '/v1/status-keys/no-value',
    body: { colorNo: 3 },
    expectStatus: 201,
    expect: (body) => {
      assert.equal(body.value, null)
      assert.equal(body.changeCount, 0)
      assert.equal(body.valueUpdatedAt, null)
    },
  },
  {
    name: 'a key not 3..42 characters long needs a name (validationError on name)',
    method: 'POST',
    url: '/v1/status-keys/x',
    body: { value: 'ON' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (body) => assert.equal(body.errors[0].field, 'name'),
  },
  {
    name: 'a key of 42 characters, the longest, names the status; one of 43 needs a name',
    method: 'POST',
    url: '/v1/status-keys/k22222222222222222222222222222222222222222',
    body: { value: 'ON' },
    expectStatus: 201,
    expect: async (body, ctx) => {
      assert.equal(body.name, 'k22222222222222222222222222222222222222222')
      const longer = await ctx.t.request(
        ctx.users.owner ?? null,
        'POST',
        '/v1/status-keys/k333333333333333333333333333333333333333333',
        {
          value: 'ON',
        },
      )
      assert.equal(longer.statusCode, 400)
      assert.equal(longer.json().errors[0].field, 'name')
    },
  },
  {
    name: 'a key of 3 characters, the shortest, names the status; one of 2 needs a name',
    method: 'POST',
    url: '/v1/status-keys/abc',
    body: { value: 'ON' },
    expectStatus: 201,
    expect: async (body, ctx) => {
      assert.equal(body.name, 'abc')
      const shorter = await ctx.t.request(ctx.users.owner ?? null, 'POST', '/v1/status-keys/ab', {
        value: 'ON',
      })
      assert.equal(shorter.statusCode, 400)
      assert.equal(shorter.json().errors[0].field, 'name')
    },
  },
  {
    name: 'a key not 3..42 characters long is fine with a name',
    method: 'POST',
    url: '/v1/status-keys/x',
    body: { value: 'ON', name: 'Lamp X' },
    expectStatus: 201,
  },
  {
    name: 'the at-least-one-property rule applies to set-by-key as well',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: {},
    expectStatus: 400,
    expectErrorCode: 'emptyBody',
  },
  {
    name: 'a key outside the documented format is 400 invalidStatusKey',
    method: 'POST',
    url: '/v1/status-keys/room%204',
    body: { value: 'ON' },
    expectStatus: 400,
    expectErrorCode: 'invalidStatusKey',
  },
  {
    name: 'a key longer than 100 characters is 400 invalidStatusKey',
    method: 'POST',
    url: `/v1/status-keys/${'k'.repeat(101)}`,
    body: { value: 'ON', name: 'Long key' },
    expectStatus: 400,
    expectErrorCode: 'invalidStatusKey',
  },
  {
    name: 'a key of 100 characters from the allowed set is fine',
    method: 'POST',
    url: `/v1/status-keys/${'aZ09-._~'.repeat(12)}abcd`,
    body: { value: 'ON', name: 'Long key' },
    expectStatus: 201,
  },
  {
    name: "keys are per owner: another user's same key creates their own status",
    as: 'stranger',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: { value: 'MINE' },
    expectStatus: 201,
    expect: async (body, ctx) => {
      assert.notEqual(body.id, ctx.vars.statusId)
      assert.equal((await readBack(ctx)).value, 'OCCUPIED')
    },
  },
  {
    name: 'keys are case-sensitive',
    method: 'POST',
    url: '/v1/status-keys/ROOM-4',
    body: { value: 'ON' },
    expectStatus: 201,
  },
])

runReadOnlyScenarios('GET /v1/user/status (list your statuses)', withOneStatus, [
  {
    name: 'lists the statuses the caller owns as list entries',
    method: 'GET',
    url: '/v1/user/status',
    expectStatus: 200,
    expect: (body, ctx) =>
      assert.deepEqual(body, [
        {
          statusId: ctx.vars.statusId,
          statusKey: 'room-4',
          shareId: body[0].shareId,
          name: 'room-4',
        },
      ]),
  },
  {
    name: "does not list other users' statuses",
    as: 'stranger',
    method: 'GET',
    url: '/v1/user/status',
    expectStatus: 200,
    expect: (body) => assert.deepEqual(body, []),
  },
  {
    name: 'limit outside 1..1000 is a validationError',
    method: 'GET',
    url: '/v1/user/status?limit=0',
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'a cursor the service did not issue is a validationError',
    method: 'GET',
    url: '/v1/user/status?limit=2&cursor=garbage',
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  ...[
    ['base64url JSON of the wrong shape', ['9999', 'zzzz']],
    ['a timestamp that is not one', ['yesterday', 'aaaaaaaaaaaaaaaaaaaaa']],
    ['an id that is not one', ['2026-11-22T04:26:43.806Z', 'x']],
    ['half a list head', ['', 'aaaaaaaaaaaaaaaaaaaaa']],
    ['three parts', ['2026-11-22T04:26:43.806Z', 'aaaaaaaaaaaaaaaaaaaaa', 'x']],
  ].map(([what, parts]) => ({
    name: `a cursor the service did not issue is a validationError: ${what}`,
    method: 'GET' as const,
    url: `/v1/user/status?limit=2&cursor=${Buffer.from(JSON.stringify(parts)).toString('base64url')}`,
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (body: { errors: { field: string }[] }) =>
      assert.equal(body.errors[0]?.field, 'cursor'),
  })),
  {
    name: 'a cursor the service did not issue is a validationError: padded base64',
    method: 'GET',
    url: `/v1/user/status?limit=2&cursor=${Buffer.from('["2026-11-22T04:26:43.806Z","aaaaaaaaaaaaaaaaaaaaa"]').toString('base64')}`,
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
])

// Paging needs more than one status; its own test keeps the table above readable.

test('list paging: ?limit pages in creation order, Link rel="next" names the next page', async (ctx) => {
  const t = await makeApp(ctx, { plans: TEST_PLANS })
  const owner = await t.user()
  const keys = Array.from({ length: 7 }, (_, i) => `status-${i}`)
  for (const key of keys) await t.request(owner, 'POST', `/v1/status-keys/${key}`, { value: 'X' })
  const all = (await t.request(owner, 'GET', '/v1/user/status')).json()
  assert.deepEqual(
    all.map((e: { statusKey: string }) => e.statusKey),
    keys,
    'without limit: every status, creation order',
  )
  const seen: string[] = []
  let url: string | undefined = '/v1/user/status?limit=3'
  let pages = 0
  while (url) {
    const res = await t.request(owner, 'GET', url)
    assert.equal(res.statusCode, 200)
    seen.push(...res.json().map((e: { statusKey: string }) => e.statusKey))
    const link = res.headers.link as string | undefined
    url = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined
    pages += 1
  }
  assert.equal(pages, 3)
  assert.deepEqual(seen, keys)
})
