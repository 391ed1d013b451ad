import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { USER_SCOPES } from '../../src/modules/keys/scopes.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'

// Key rotation through the API: POST /v1/user/api-keys/:keyId/rotate → 201 with a new key
// (shown once) that keeps the old one's label and expiry; the old key is revoked at once, or
// keeps working for `graceSeconds` (documented in docs/security.md and docs/api.md).

const keyIdOf = async (t: TestApp, user: TestUser): Promise<string> =>
  (await t.request(user, 'GET', '/v1/user/api-keys')).json()[0].id

async function setup(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const other = await t.user()
  const unverified = await t.user({ verified: false })
  const vars: Record<string, string> = {
    ownKeyId: await keyIdOf(t, owner),
    otherKeyId: await keyIdOf(t, other),
    unverifiedKeyId: await keyIdOf(t, unverified),
  }
  // a labelled key with an expiry, one expiring soon, and a revoked one
  const made = async (body: unknown) =>
    (await t.request(owner, 'POST', '/v1/user/api-keys', body)).json()
  vars.labelledKeyId = (await made({ label: 'deploy bot', expiresAt: '2099-01-01T00:00:00Z' })).id
  const soon = await made({ expiresAt: new Date(Date.now() + 600_000).toISOString() })
  vars.soonKeyId = soon.id
  vars.soonExpiry = soon.expiresAt
  const revoked = await made({})
  await t.request(owner, 'DELETE', `/v1/user/api-keys/${revoked.id}`)
  vars.revokedKeyId = revoked.id
  return { t, users: { owner, other, unverified }, vars }
}

const check = (t: TestApp, key: string) => t.request({ id: '', key }, 'GET', '/v1/checkAuth')

runScenarios('key rotation: POST /v1/user/api-keys/:keyId/rotate', setup, [
  {
    name: 'rotating the key in use: 201, a new key shown once, the old key revoked at once',
    method: 'POST',
    url: '/v1/user/api-keys/{ownKeyId}/rotate',
    expectStatus: 201,
    expect: async (body, ctx, res) => {
      const old = ctx.users.owner as TestUser
      assert.match(body.key, /^sdk_[A-Za-z0-9]{40}$/)
      assert.notEqual(body.key, old.key)
      assert.notEqual(body.id, ctx.vars.ownKeyId)
      assert.equal(res.headers.location, `/v1/user/api-keys/${body.id}`)
      assert.equal(body.replaced.id, ctx.vars.ownKeyId)
      assert.equal(typeof body.replaced.revokedAt, 'string')
      assert.equal((await check(ctx.t, old.key)).statusCode, 401, 'the old key stopped working')
      const now = await check(ctx.t, body.key)
      assert.equal(now.statusCode, 200, 'the new key works at once')
      assert.equal(now.json().userId, old.id)
      const list = (
        await ctx.t.request({ id: '', key: body.key }, 'GET', '/v1/user/api-keys')
      ).json()
      assert.equal(list.length, 5, 'the setup made four, the rotation one more')
      assert.ok(!JSON.stringify(list).includes(body.key), 'the new secret is never listed')
    },
  },
  {
    name: 'the new key keeps the label and the expiry of the old one',
    method: 'POST',
    url: '/v1/user/api-keys/{labelledKeyId}/rotate',
    expectStatus: 201,
    expect: (body) => {
      assert.equal(body.label, 'deploy bot')
      assert.equal(body.expiresAt, '2099-01-01T00:00:00.000Z')
      assert.equal(body.replaced.label, 'deploy bot')
    },
  },
  {
    name: 'graceSeconds: the old key keeps working, set to expire after the grace period',
    method: 'POST',
    url: '/v1/user/api-keys/{ownKeyId}/rotate',
    body: { graceSeconds: 3600 },
    expectStatus: 201,
    expect: async (body, ctx) => {
      const old = ctx.users.owner as TestUser
      assert.equal(body.replaced.revokedAt, null)
      const expires = Date.parse(body.replaced.expiresAt)
      assert.ok(expires > Date.now() && expires <= Date.now() + 3600_000)
      assert.equal((await check(ctx.t, old.key)).statusCode, 200, 'old key works during grace')
      assert.equal((await check(ctx.t, body.key)).statusCode, 200)
      // the grace period ends (moved into the past here rather than waited for)
      await sql`update api_keys set expires_at = '2000-01-01T00:00:00.000Z' where id = ${ctx.vars.ownKeyId}`.execute(
        ctx.t.database.db,
      )
      assert.equal((await check(ctx.t, old.key)).statusCode, 401, 'and stops after it')
      assert.equal((await check(ctx.t, body.key)).statusCode, 200)
    },
  },
  {
    name: 'a grace period never extends an old key past its own expiry',
    method: 'POST',
    url: '/v1/user/api-keys/{soonKeyId}/rotate',
    body: { graceSeconds: 86400 },
    expectStatus: 201,
    expect: (body, ctx) => assert.equal(body.replaced.expiresAt, ctx.vars.soonExpiry),
  },
  {
    name: 'graceSeconds over 24 h is a validationError naming it',
    method: 'POST',
    url: '/v1/user/api-keys/{ownKeyId}/rotate',
    body: { graceSeconds: 86401 },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (body) => assert.equal(body.errors[0].field, 'graceSeconds'),
  },
  {
    name: 'graceSeconds as a string is refused (no coercion)',
    method: 'POST',
    url: '/v1/user/api-keys/{ownKeyId}/rotate',
    body: { graceSeconds: '60' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'unknown properties are refused (no expiresAt or userId smuggled in)',
    method: 'POST',
    url: '/v1/user/api-keys/{ownKeyId}/rotate',
    body: { userId: 'someone' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: "someone else's key: 404 (like a missing key), and their key keeps working",
    method: 'POST',
    url: '/v1/user/api-keys/{otherKeyId}/rotate',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => {
      assert.equal((await check(ctx.t, (ctx.users.other as TestUser).key)).statusCode, 200)
      const list = (await ctx.t.request(ctx.users.other ?? null, 'GET', '/v1/user/api-keys')).json()
      assert.equal(list.length, 1, 'no key was minted for them')
    },
  },
  {
    name: 'a key id that does not exist: 404',
    method: 'POST',
    url: '/v1/user/api-keys/nosuchkey/rotate',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'a revoked key cannot be rotated: 409 conflict, no key minted',
    method: 'POST',
    url: '/v1/user/api-keys/{revokedKeyId}/rotate',
    expectStatus: 409,
    expectErrorCode: 'conflict',
    expect: async (_body, ctx) => {
      const list = (await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/api-keys')).json()
      assert.equal(list.length, 4)
    },
  },
  {
    name: 'an unverified user may rotate their own keys (key management needs no verification)',
    as: 'unverified',
    method: 'POST',
    url: '/v1/user/api-keys/{unverifiedKeyId}/rotate',
    expectStatus: 201,
  },
  {
    name: 'without a key: 401',
    as: null,
    method: 'POST',
    url: '/v1/user/api-keys/{ownKeyId}/rotate',
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
])

test('two racing rotations of one key: exactly one wins, the other gets 409', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  // a spare that may rotate the owner's key: every scope it has (the minting rule)
  const spare = (
    await t.request(owner, 'POST', '/v1/user/api-keys', { scopes: [...USER_SCOPES] })
  ).json()
  const keyId = await keyIdOf(t, owner)
  const results = await Promise.all(
    Array.from({ length: 5 }, () =>
      t.request({ id: '', key: spare.key }, 'POST', `/v1/user/api-keys/${keyId}/rotate`),
    ),
  )
  const codes = results.map((r) => r.statusCode).sort()
  assert.deepEqual(codes, [201, 409, 409, 409, 409])
  const list = (await t.request({ id: '', key: spare.key }, 'GET', '/v1/user/api-keys')).json()
  assert.equal(list.length, 3, 'the original, the spare and one successor')
})

test('two racing rotations with a grace period: exactly one wins, the other gets 409', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const keyId = await keyIdOf(t, owner)
  const results = await Promise.all(
    Array.from({ length: 5 }, () =>
      t.request(owner, 'POST', `/v1/user/api-keys/${keyId}/rotate`, { graceSeconds: 60 }),
    ),
  )
  assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409])
  const list = (await t.request(owner, 'GET', '/v1/user/api-keys')).json()
  assert.equal(list.length, 2, 'the original, in its grace period, and one successor')
})

test('a key is replaced once: rotating it again in its grace period is 409, and the successor keeps the old expiry', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const keyId = await keyIdOf(t, owner)
  const first = await t.request(owner, 'POST', `/v1/user/api-keys/${keyId}/rotate`, {
    graceSeconds: 60,
  })
  assert.equal(first.statusCode, 201)
  const successor = first.json()
  assert.equal(successor.expiresAt, null, 'the original never expired, nor does its successor')
  assert.equal(successor.replaced.replacedBy, successor.id)
  assert.equal(successor.replacedBy, null)

  // the response was "lost": the old key still gets in, but cannot make a second successor
  const again = await t.request(owner, 'POST', `/v1/user/api-keys/${keyId}/rotate`, {
    graceSeconds: 60,
  })
  assert.equal(again.statusCode, 409)
  assert.equal(again.json().errorCode, 'conflict')
  assert.match(again.json().message, /already rotated/)

  // the way back: the list names the successor, whose rotation gives a secret we hold
  const list = (await t.request(owner, 'GET', '/v1/user/api-keys')).json()
  const old = list.find((k: { id: string }) => k.id === keyId)
  assert.equal(old.replacedBy, successor.id)
  const recovered = await t.request(owner, 'POST', `/v1/user/api-keys/${old.replacedBy}/rotate`)
  assert.equal(recovered.statusCode, 201)
  assert.equal(recovered.json().expiresAt, null, 'the recovery key does not expire either')
  assert.equal((await check(t, recovered.json().key)).statusCode, 200)
  assert.equal((await check(t, successor.key)).statusCode, 401, 'the lost secret is revoked')
})
