import assert from 'node:assert/strict'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'

async function twoUsers(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const other = await t.user()
  const unverified = await t.user({ verified: false })
  const otherKeys = (await t.request(other, 'GET', '/v1/user/api-keys')).json()
  return { t, users: { owner, other, unverified }, vars: { otherKeyId: otherKeys[0].id } }
}

runScenarios('a user manages their own API keys', twoUsers, [
  {
    name: 'GET /v1/user/api-keys lists id, prefix, label, timestamps: never the secret or its hash',
    method: 'GET',
    url: '/v1/user/api-keys',
    expectStatus: 200,
    expect: (body, ctx) => {
      assert.equal(body.length, 1)
      assert.deepEqual(Object.keys(body[0]).sort(), [
        'createdAt',
        'expiresAt',
        'id',
        'label',
        'prefix',
        'replacedBy',
        'revokedAt',
        'scopes',
        'statusIds',
      ])
      const secret = ctx.users.owner?.key as string
      assert.ok(secret.startsWith(body[0].prefix))
      assert.ok(!JSON.stringify(body).includes(secret))
    },
  },
  {
    name: 'POST /v1/user/api-keys creates a key shown once (201) that works at once',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { label: 'CI job' },
    expectStatus: 201,
    expect: async (body, ctx) => {
      assert.match(body.key, /^sdk_[A-Za-z0-9]{40}$/)
      assert.equal(body.label, 'CI job')
      const check = await ctx.t.request({ id: '', key: body.key }, 'GET', '/v1/checkAuth')
      assert.equal(check.statusCode, 200)
      assert.equal(check.json().userId, ctx.users.owner?.id)
      const list = (await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/api-keys')).json()
      assert.equal(list.length, 2)
      assert.ok(!JSON.stringify(list).includes(body.key), 'the secret is never listed')
    },
  },
  {
    name: 'POST /v1/user/api-keys without a body creates an unlabelled key',
    method: 'POST',
    url: '/v1/user/api-keys',
    expectStatus: 201,
    expect: (body) => assert.equal(body.label, null),
  },
  {
    name: 'an expiry in the past is a validationError on expiresAt',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { expiresAt: '2000-01-01T00:00:00Z' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (body) => assert.equal(body.errors[0].field, 'expiresAt'),
  },
  {
    name: 'an expiry in RFC 3339 with a lower-case t and z is accepted',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { expiresAt: '2099-01-01t12:00:00z' }, // far ahead: it must stay in the future
    expectStatus: 201,
    expect: (body) => assert.equal(body.expiresAt, '2099-01-01T12:00:00.000Z'),
  },
  {
    name: 'an expiry on a leap second (RFC 3339 :60) is the second after :59',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { expiresAt: '2099-06-30T23:59:60Z' },
    expectStatus: 201,
    expect: (body) => assert.equal(body.expiresAt, '2099-07-01T00:00:00.000Z'),
  },
  {
    name: 'an expiry that is not a date-time is a validationError',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { expiresAt: 'tomorrow' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'unknown properties are rejected by name',
    method: 'POST',
    url: '/v1/user/api-keys',
    body: { scope: 'admin' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (body) => assert.equal(body.errors[0].field, 'scope'),
  },
  {
    name: 'an unverified user may manage their own keys',
    as: 'unverified',
    method: 'GET',
    url: '/v1/user/api-keys',
    expectStatus: 200,
  },
  {
    name: "revoking someone else's key answers 404 and leaves it working",
    method: 'DELETE',
    url: '/v1/user/api-keys/{otherKeyId}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => {
      const check = await ctx.t.request(ctx.users.other ?? null, 'GET', '/v1/checkAuth')
      assert.equal(check.statusCode, 200)
    },
  },
  {
    name: 'DELETE /v1/user/api-keys/:keyId revokes the key: 204, then the key gets 401',
    as: 'other',
    method: 'DELETE',
    url: '/v1/user/api-keys/{otherKeyId}',
    expectStatus: 204,
    expect: async (_body, ctx) => {
      const check = await ctx.t.request(ctx.users.other ?? null, 'GET', '/v1/checkAuth')
      assert.equal(check.statusCode, 401)
      assert.equal(check.json().errorCode, 'unauthorized')
    },
  },
])
