import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createApiKey, revokeKey } from '../../src/modules/keys/keys.service.ts'
import { USER_SCOPES } from '../../src/modules/keys/scopes.ts'
import { setUser } from '../../src/modules/users/users.service.ts'
import { makeApp, TEST_PLANS } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type Scenario, type ScenarioContext } from '../helpers/scenarios.ts'

// docs/api.md#authentication: keys travel in `service-api-key` or `Authorization: Bearer`, never in
// the query string; missing, unknown, revoked and expired keys get 401; the status operations need
// a verified user (403 notVerified), `GET /v1/checkAuth` works at either level.

const A_WHILE_AGO = '2000-01-01T00:00:00.000Z'
const IN_AN_HOUR = () => new Date(Date.now() + 3_600_000).toISOString()

/**
 * The owner of `room-4` (public); keys of that owner that were revoked, that expired and
 * that will expire; and an unverified user who owns `mine`, created before losing verification.
 */
async function withKeys(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const db = t.database.db
  const owner = await t.user({ name: 'Owner' })
  const created = await t.request(owner, 'POST', '/v1/status-keys/room-4', {
    value: 'OCCUPIED',
    accessType: 'public',
  })
  assert.equal(created.statusCode, 201)

  const revoked = await createApiKey(db, owner.id, { label: 'revoked' })
  await revokeKey({ db }, revoked.id)
  const expired = await createApiKey(db, owner.id, { expiresAt: IN_AN_HOUR() })
  // note: keys cannot be created already expired, so this one is made to expire afterwards
  await db
    .updateTable('api_keys')
    .set({ expires_at: A_WHILE_AGO })
    .where('id', '=', expired.id)
    .execute()
  const expiring = await createApiKey(db, owner.id, { expiresAt: IN_AN_HOUR() })

  const pending = await t.user({ name: 'Pending' })
  const mine = await t.request(pending, 'POST', '/v1/status-keys/mine', { value: 'MINE' })
  assert.equal(mine.statusCode, 201)
  await setUser(db, TEST_PLANS, pending.id, { verified: false })

  return {
    t,
    users: {
      owner,
      revoked: { id: owner.id, key: revoked.key },
      expired: { id: owner.id, key: expired.key },
      expiring: { id: owner.id, key: expiring.key },
      unknown: { id: owner.id, key: `sdk_${'A'.repeat(40)}` },
      garbage: { id: owner.id, key: 'not-a-key' },
      huge: { id: owner.id, key: `sdk_${'A'.repeat(10_000)}` },
      pending,
    },
    vars: {
      statusId: created.json().id,
      before: created.body,
      ownerId: owner.id,
      ownerKey: owner.key,
      revokedKey: revoked.key,
      expiredKey: expired.key,
      pendingId: pending.id,
      mineId: mine.json().id,
      mineBefore: mine.body,
    },
  }
}

/** Both statuses read back exactly as they were created. */
async function assertUnchanged(ctx: ScenarioContext): Promise<void> {
  const owner = ctx.users.owner ?? null
  const room = await ctx.t.request(owner, 'GET', `/v1/status/${ctx.vars.statusId}`)
  assert.deepEqual(room.json(), JSON.parse(ctx.vars.before ?? ''), 'room-4 unchanged')
  const mine = await ctx.t.database.db
    .selectFrom('statuses')
    .select(['value', 'change_count'])
    .where('id', '=', ctx.vars.mineId ?? '')
    .executeTakeFirst()
  assert.deepEqual(mine, { value: 'MINE', change_count: 1 }, 'mine unchanged')
}

/** Operations 1–6 on the owner's status, and 7. */
const OPERATIONS: Pick<Scenario, 'method' | 'url' | 'body'>[] = [
  { method: 'PATCH', url: '/v1/status/{statusId}', body: { value: 'X' } },
  { method: 'POST', url: '/v1/status-keys/room-4', body: { value: 'X' } },
  { method: 'GET', url: '/v1/user/status' },
  { method: 'GET', url: '/v1/status/{statusId}' },
  { method: 'GET', url: '/v1/status-keys/room-4' },
  { method: 'DELETE', url: '/v1/status/{statusId}' },
  { method: 'DELETE', url: '/v1/status-keys/room-4' },
  { method: 'GET', url: '/v1/checkAuth' },
]
const label = (op: Pick<Scenario, 'method' | 'url'>) => `${op.method} ${op.url}`

/** `as` is refused with 401 on every operation, the key is not echoed, nothing changes. */
const unauthorizedEverywhere = (rule: string, as: string | null): Scenario[] =>
  OPERATIONS.map((op) => ({
    name: `${rule} [${label(op)}]`,
    as,
    ...op,
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
    expect: async (body, ctx) => {
      const key = as === null ? undefined : ctx.users[as]?.key
      if (key) assert.ok(!JSON.stringify(body).includes(key), 'the key is not echoed')
      await assertUnchanged(ctx)
    },
  }))

runScenarios('missing, unknown, revoked, expired keys → 401', withKeys, [
  ...unauthorizedEverywhere('a request without a key is 401', null),
  ...unauthorizedEverywhere('an unknown key is 401', 'unknown'),
  ...unauthorizedEverywhere('a revoked key is 401', 'revoked'),
  ...unauthorizedEverywhere('an expired key is 401', 'expired'),
  {
    name: 'a string that is no key at all is 401',
    as: 'garbage',
    method: 'GET',
    url: '/v1/checkAuth',
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
  {
    name: 'an absurdly long key is 401',
    as: 'huge',
    method: 'GET',
    url: '/v1/checkAuth',
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
  {
    name: 'an empty service-api-key header is 401',
    as: null,
    method: 'GET',
    url: '/v1/checkAuth',
    headers: { 'service-api-key': '' },
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
  {
    name: 'a key that has not yet expired works',
    as: 'expiring',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: 'FREE' },
    expectStatus: 200,
  },
  {
    name: "revoking one key leaves the user's other keys working",
    method: 'GET',
    url: '/v1/status/{statusId}',
    expectStatus: 200,
  },
  {
    name: 'authentication comes before body parsing: no key + broken JSON is 401',
    as: null,
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: '{"value":',
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
])

runScenarios('Authorization: Bearer is accepted', withKeys, [
  {
    name: 'Bearer <key> authenticates checkAuth',
    as: null,
    method: 'GET',
    url: '/v1/checkAuth',
    headers: { authorization: 'Bearer {ownerKey}' },
    expectStatus: 200,
    expect: (body, ctx) => assert.equal(body.userId, ctx.vars.ownerId),
  },
  {
    name: 'Bearer <key> authenticates an update',
    as: null,
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: 'FREE' },
    headers: { authorization: 'Bearer {ownerKey}' },
    expectStatus: 200,
    expect: (body) => assert.equal(body.value, 'FREE'),
  },
  {
    name: 'the auth scheme is case-insensitive (RFC 9110): bearer <key>',
    as: null,
    method: 'GET',
    url: '/v1/checkAuth',
    headers: { authorization: 'bearer {ownerKey}' },
    expectStatus: 200,
  },
  ...[
    ['Bearer with an unknown key', `Bearer sdk_${'B'.repeat(40)}`],
    ['Bearer without a key', 'Bearer'],
    ['Basic credentials', `Basic ${Buffer.from('user:pass').toString('base64')}`],
    ['another scheme carrying the key', 'Token {ownerKey}'],
    ['a bare key without a scheme', '{ownerKey}'],
  ].map(
    ([what, header]): Scenario => ({
      name: `Authorization: ${what} is 401`,
      as: null,
      method: 'GET',
      url: '/v1/status/{statusId}',
      headers: { authorization: header as string },
      expectStatus: 401,
      expectErrorCode: 'unauthorized',
    }),
  ),
  ...['revokedKey', 'expiredKey'].map(
    (key): Scenario => ({
      name: `Bearer with a ${key.replace('Key', '')} key is 401`,
      as: null,
      method: 'GET',
      url: '/v1/checkAuth',
      headers: { authorization: `Bearer {${key}}` },
      expectStatus: 401,
      expectErrorCode: 'unauthorized',
    }),
  ),
])

runScenarios('a key in the query string is never accepted', withKeys, [
  ...['service-api-key', 'apiKey', 'api_key', 'key', 'access_token', 'token'].flatMap((param) =>
    ['/v1/checkAuth', '/v1/status/{statusId}'].map(
      (path): Scenario => ({
        name: `?${param}=<key> is 401 [GET ${path}]`,
        as: null,
        method: 'GET',
        url: `${path}?${param}={ownerKey}`,
        expectStatus: 401,
        expectErrorCode: 'unauthorized',
      }),
    ),
  ),
  {
    name: '?service-api-key=<key> does not authorise an update either',
    as: null,
    method: 'PATCH',
    url: '/v1/status/{statusId}?service-api-key={ownerKey}',
    body: { value: 'X' },
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
    expect: (_body, ctx) => assertUnchanged(ctx),
  },
])

/** Operations 1–6, on the unverified user's own status and on the owner's public one. */
const PENDING_OPERATIONS: Pick<Scenario, 'method' | 'url' | 'body'>[] = [
  ...OPERATIONS.slice(0, -1),
  { method: 'PATCH', url: '/v1/status/{mineId}', body: { value: 'X' } },
  { method: 'POST', url: '/v1/status-keys/mine', body: { value: 'X' } },
  { method: 'POST', url: '/v1/status-keys/brand-new', body: { value: 'X' } },
  { method: 'GET', url: '/v1/status/{mineId}' },
  { method: 'GET', url: '/v1/status-keys/mine' },
  { method: 'DELETE', url: '/v1/status/{mineId}' },
  { method: 'DELETE', url: '/v1/status-keys/mine' },
]

runScenarios('authorization levels', withKeys, [
  ...PENDING_OPERATIONS.map(
    (op): Scenario => ({
      name: `an unverified user gets 403 notVerified [${label(op)}]`,
      as: 'pending',
      ...op,
      expectStatus: 403,
      expectErrorCode: 'notVerified',
      expect: async (_body, ctx) => {
        await assertUnchanged(ctx)
        const owned = await ctx.t.database.db
          .selectFrom('statuses')
          .select('id')
          .where('owner_id', '=', ctx.vars.pendingId ?? '')
          .execute()
        assert.equal(owned.length, 1, 'nothing created')
      },
    }),
  ),
  {
    name: 'the level is checked before the body: unverified + invalid body is 403',
    as: 'pending',
    method: 'PATCH',
    url: '/v1/status/{mineId}',
    body: { colorNo: 'x' },
    expectStatus: 403,
    expectErrorCode: 'notVerified',
  },
  {
    name: 'checkAuth works for an unverified user: authLevel authenticated',
    as: 'pending',
    method: 'GET',
    url: '/v1/checkAuth',
    expectStatus: 200,
    expect: (body, ctx) =>
      assert.deepEqual(body, {
        userId: ctx.vars.pendingId,
        name: 'Pending',
        authLevel: 'authenticated',
        plan: 'unlimited',
        // a key made before scopes, or by the operator: every scope, every status
        credential: {
          kind: 'key',
          id: body.credential.id,
          scopes: [...USER_SCOPES],
          statusIds: null,
        },
      }),
  },
  {
    name: 'checkAuth for a verified user: { userId, name, authLevel, plan, credential }',
    method: 'GET',
    url: '/v1/checkAuth',
    expectStatus: 200,
    expect: (body, ctx) =>
      assert.deepEqual(body, {
        userId: ctx.vars.ownerId,
        name: 'Owner',
        authLevel: 'verified',
        plan: 'unlimited',
        // a key made before scopes, or by the operator: every scope, every status
        credential: {
          kind: 'key',
          id: body.credential.id,
          scopes: [...USER_SCOPES],
          statusIds: null,
        },
      }),
  },
  {
    name: 'checkAuth never shows the key',
    method: 'GET',
    url: '/v1/checkAuth',
    expectStatus: 200,
    expect: (_body, ctx, res) => {
      assert.ok(!JSON.stringify(res.headers).includes(ctx.vars.ownerKey ?? ''))
      assert.ok(!JSON.stringify(_body).includes(ctx.vars.ownerKey ?? ''))
    },
  },
])

test('revocation, expiry and verification take effect on the next request', async (ctx) => {
  const t = await makeApp(ctx)
  const db = t.database.db
  const user = await t.user({ verified: false })
  const key = await createApiKey(db, user.id, { expiresAt: IN_AN_HOUR() })
  const as = { id: user.id, key: key.key }

  assert.equal((await t.request(as, 'GET', '/v1/user/status')).statusCode, 403)
  await setUser(db, TEST_PLANS, user.id, { verified: true })
  assert.equal((await t.request(as, 'GET', '/v1/user/status')).statusCode, 200, 'now verified')

  await db
    .updateTable('api_keys')
    .set({ expires_at: A_WHILE_AGO })
    .where('id', '=', key.id)
    .execute()
  assert.equal((await t.request(as, 'GET', '/v1/user/status')).statusCode, 401, 'expired')

  const other = await createApiKey(db, user.id)
  const as2 = { id: user.id, key: other.key }
  assert.equal((await t.request(as2, 'GET', '/v1/checkAuth')).statusCode, 200)
  await revokeKey({ db }, other.id)
  const res = await t.request(as2, 'GET', '/v1/checkAuth')
  assert.equal(res.statusCode, 401, 'revoked')
  assert.equal(res.json().errorCode, 'unauthorized')
})

test('keys are stored only as a hash', async (ctx) => {
  const t = await makeApp(ctx)
  const user = await t.user()
  const rows = await t.database.db.selectFrom('api_keys').selectAll().execute()
  assert.equal(rows.length, 1)
  assert.ok(!JSON.stringify(rows).includes(user.key), 'the secret is nowhere in the table')
  assert.ok(user.key.startsWith(rows[0]?.prefix ?? '?'), 'a recognisable prefix is kept')
})

test('a 401 names the scheme that would succeed (WWW-Authenticate, RFC 9110)', async (ctx) => {
  const t = await makeApp(ctx)
  const res = await t.request(null, 'GET', '/v1/user/status')
  assert.equal(res.statusCode, 401)
  assert.equal(res.headers['www-authenticate'], 'Bearer realm="statusd"')
})
