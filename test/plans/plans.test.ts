import assert from 'node:assert/strict'
import { describe, it, test } from 'node:test'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import type { Plan, Plans } from '../../src/modules/plans/plans.ts'
import { setUser } from '../../src/modules/users/users.service.ts'
import { makeApp, TEST_PLANS } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type Scenario, type ScenarioContext } from '../helpers/scenarios.ts'

// docs/api.md#plans: plan gates (links in descriptions, access-type settings), the status limit and
// the request rate, checked over HTTP. Pure plan rules are in test/plans/plan-rules.test.ts.

/**
 * A `free` user with `room` (all defaults) and `legacy` (made on `pro` with non-default
 * access settings and a link, then downgraded to free); a `pro` user with `desk`.
 */
async function withPlans(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const free = await t.user({ plan: 'free', name: 'Free' })
  const pro = await t.user({ plan: 'pro', name: 'Pro' })
  const room = await t.request(free, 'POST', '/v1/status-keys/room', { value: 'A' })
  assert.equal(room.statusCode, 201, room.body)
  await setUser(t.database.db, TEST_PLANS, free.id, { plan: 'pro' })
  const legacy = await t.request(free, 'POST', '/v1/status-keys/legacy', {
    value: 'A',
    description: 'See https://example.com',
    accessTypeUserList: 'public',
    accessTypeHistory: 'owner',
  })
  assert.equal(legacy.statusCode, 201, legacy.body)
  await setUser(t.database.db, TEST_PLANS, free.id, { plan: 'free' })
  const desk = await t.request(pro, 'POST', '/v1/status-keys/desk', { value: 'A' })
  assert.equal(desk.statusCode, 201, desk.body)
  return {
    t,
    users: { free, pro },
    vars: {
      roomId: room.json().id,
      roomBefore: room.body,
      legacyId: legacy.json().id,
      legacyBefore: legacy.body,
      deskId: desk.json().id,
    },
  }
}

async function assertFreeUnchanged(ctx: ScenarioContext): Promise<void> {
  const free = ctx.users.free ?? null
  for (const which of ['room', 'legacy']) {
    const res = await ctx.t.request(free, 'GET', `/v1/status/${ctx.vars[`${which}Id`]}`)
    assert.deepEqual(res.json(), JSON.parse(ctx.vars[`${which}Before`] ?? ''), `${which} unchanged`)
  }
  const list = await ctx.t.request(free, 'GET', '/v1/user/status')
  assert.equal(list.json().length, 2, 'no status created')
}

/** As `free`: create (POST new key), update by PATCH, update by POST — each 402, nothing changes. */
function refusedOnFree(rule: string, body: Record<string, unknown>, field: string): Scenario[] {
  return [
    { method: 'POST', url: '/v1/status-keys/new-key', via: 'create' },
    { method: 'PATCH', url: '/v1/status/{roomId}', via: 'PATCH' },
    { method: 'POST', url: '/v1/status-keys/room', via: 'POST update' },
  ].map(({ method, url, via }) => ({
    name: `${rule} [${via}]`,
    as: 'free',
    method: method as 'POST' | 'PATCH',
    url,
    body,
    expectStatus: 402,
    expectErrorCode: 'planFeatureUnavailable',
    expect: async (res, ctx) => {
      assert.ok(
        res.errors?.some((e: { field: string }) => e.field === field),
        `names ${field}: ${JSON.stringify(res)}`,
      )
      await assertFreeUnchanged(ctx)
    },
  }))
}

/** As `as`: create and PATCH both succeed and store `body`. */
function allowed(rule: string, as: string, body: Record<string, unknown>): Scenario[] {
  const check = (res: Record<string, unknown>) => {
    for (const [field, value] of Object.entries(body))
      assert.equal(
        res[field],
        field === 'accessTypeUserList' && value === 'owners' ? 'owner' : value,
      )
  }
  return [
    {
      name: `${rule} [create]`,
      as,
      method: 'POST',
      url: '/v1/status-keys/new-key',
      body,
      expectStatus: 201,
      expect: check,
    },
    {
      name: `${rule} [PATCH]`,
      as,
      method: 'PATCH',
      url: as === 'pro' ? '/v1/status/{deskId}' : '/v1/status/{roomId}',
      body,
      expectStatus: 200,
      expect: check,
    },
  ]
}

runScenarios('links in descriptions', withPlans, [
  ...refusedOnFree(
    'a URL in a description is 402 on free',
    {
      description: 'See https://example.com/status',
    },
    'description',
  ),
  ...refusedOnFree(
    'a bare domain (example.com) is a link: 402 on free',
    {
      description: 'Details at example.com',
    },
    'description',
  ),
  ...refusedOnFree(
    'a www. domain is a link: 402 on free',
    {
      description: 'www.example.org has more',
    },
    'description',
  ),
  ...refusedOnFree(
    'an e-mail address is a link: 402 on free',
    {
      description: 'Questions: ops@example.com',
    },
    'description',
  ),
  ...refusedOnFree(
    'an IDN domain is a link: 402 on free',
    {
      description: 'Siehe münchen.de',
    },
    'description',
  ),
  ...refusedOnFree(
    'a link next to an allowed value is still 402: nothing applied',
    {
      value: 'B',
      description: 'example.com',
    },
    'description',
  ),
  ...allowed('plain text is fine on free', 'free', {
    description: 'Floor 2, room 4. Back at 3.30 p.m.; ask Bob (v1.2.3, ratio 3:4).',
  }),
  ...allowed('links are fine on pro', 'pro', {
    description: 'See https://example.com, example.org or ops@example.com',
  }),
  {
    name: 'a value update is fine on free when the stored description has a link (downgrade)',
    as: 'free',
    method: 'PATCH',
    url: '/v1/status/{legacyId}',
    body: { value: 'B' },
    expectStatus: 200,
    expect: (body) => {
      assert.equal(body.value, 'B')
      assert.equal(body.description, 'See https://example.com')
    },
  },
])

runScenarios('access-type settings', withPlans, [
  ...refusedOnFree(
    'accessTypeUserList public is 402 on free',
    {
      accessTypeUserList: 'public',
    },
    'accessTypeUserList',
  ),
  ...refusedOnFree(
    'accessTypeUserList private is 402 on free',
    {
      accessTypeUserList: 'private',
    },
    'accessTypeUserList',
  ),
  ...refusedOnFree(
    'accessTypeHistory public is 402 on free',
    {
      accessTypeHistory: 'public',
    },
    'accessTypeHistory',
  ),
  ...refusedOnFree(
    'accessTypeHistory owner is 402 on free',
    {
      accessTypeHistory: 'owner',
    },
    'accessTypeHistory',
  ),
  ...refusedOnFree(
    'a refused setting next to an allowed value: nothing applied',
    {
      value: 'B',
      accessTypeUserList: 'public',
    },
    'accessTypeUserList',
  ),
  ...allowed('sending the default accessTypeUserList (owner) is fine on free', 'free', {
    accessTypeUserList: 'owner',
  }),
  ...allowed('the alias owners is the default too: fine on free', 'free', {
    accessTypeUserList: 'owners',
  }),
  ...allowed('sending the default accessTypeHistory (private) is fine on free', 'free', {
    accessTypeHistory: 'private',
    value: 'B',
  }),
  ...allowed('any access setting is fine on pro', 'pro', {
    accessTypeUserList: 'public',
    accessTypeHistory: 'owner',
  }),
  ...[
    ['PATCH', '/v1/status/{legacyId}'],
    ['POST', '/v1/status-keys/legacy'],
  ].flatMap(([method, url]): Scenario[] => [
    {
      name: `sending the current non-default values is fine on free [${method}]`,
      as: 'free',
      method: method as 'PATCH' | 'POST',
      url: url as string,
      body: { value: 'B', accessTypeUserList: 'public', accessTypeHistory: 'owner' },
      expectStatus: 200,
      expect: (body) => {
        assert.equal(body.value, 'B')
        assert.equal(body.accessTypeUserList, 'public')
        assert.equal(body.accessTypeHistory, 'owner')
      },
    },
    {
      name: `going back to the default is fine on free [${method}]`,
      as: 'free',
      method: method as 'PATCH' | 'POST',
      url: url as string,
      body: { accessTypeUserList: 'owner', accessTypeHistory: 'private' },
      expectStatus: 200,
      expect: (body) => {
        assert.equal(body.accessTypeUserList, 'owner')
        assert.equal(body.accessTypeHistory, 'private')
      },
    },
    {
      name: `a third value (neither current nor default) is 402 on free [${method}]`,
      as: 'free',
      method: method as 'PATCH' | 'POST',
      url: url as string,
      body: { accessTypeUserList: 'private' },
      expectStatus: 402,
      expectErrorCode: 'planFeatureUnavailable',
      expect: (_body, ctx) => assertFreeUnchanged(ctx),
    },
  ]),
])

const plan = (overrides: Partial<Plan>): Plan => ({
  descriptionLinks: true,
  accessSettings: true,
  maxStatuses: null,
  requestsPerMinute: null,
  historyDays: 7,
  ...overrides,
})

describe('max statuses', () => {
  const plans: Plans = { tiny: plan({ maxStatuses: 2 }) }

  it('creating beyond maxStatuses is 402 planLimitReached; updates still work', async (ctx) => {
    const t = await makeApp(ctx, { plans })
    const user = await t.user({ plan: 'tiny' })
    const a = await t.request(user, 'POST', '/v1/status-keys/a-1', { value: 'A' })
    const b = await t.request(user, 'POST', '/v1/status-keys/b-2', { value: 'B' })
    assert.deepEqual([a.statusCode, b.statusCode], [201, 201])
    const c = await t.request(user, 'POST', '/v1/status-keys/c-3', { value: 'C' })
    assert.equal(c.statusCode, 402, c.body)
    assert.equal(c.json().errorCode, 'planLimitReached')
    assert.equal(typeof c.json().requestId, 'string')
    assert.equal((await t.request(user, 'GET', '/v1/user/status')).json().length, 2)
    assert.equal((await t.request(user, 'GET', '/v1/status-keys/c-3')).statusCode, 404)

    const byKey = await t.request(user, 'POST', '/v1/status-keys/a-1', { value: 'A2' })
    assert.equal(byKey.statusCode, 200, 'update by key at the limit')
    const byId = await t.request(user, 'PATCH', `/v1/status/${b.json().id}`, { value: 'B2' })
    assert.equal(byId.statusCode, 200, 'update by id at the limit')
    assert.equal(byId.json().changeCount, 2)

    assert.equal((await t.request(user, 'DELETE', '/v1/status-keys/a-1')).statusCode, 204)
    const again = await t.request(user, 'POST', '/v1/status-keys/c-3', { value: 'C' })
    assert.equal(again.statusCode, 201, 'room again after a delete')
  })

  it('the limit is per owner', async (ctx) => {
    const t = await makeApp(ctx, { plans })
    const one = await t.user({ plan: 'tiny' })
    const two = await t.user({ plan: 'tiny' })
    for (const key of ['a-1', 'b-2'])
      assert.equal(
        (await t.request(one, 'POST', `/v1/status-keys/${key}`, { value: 'X' })).statusCode,
        201,
      )
    for (const key of ['a-1', 'b-2'])
      assert.equal(
        (await t.request(two, 'POST', `/v1/status-keys/${key}`, { value: 'X' })).statusCode,
        201,
      )
    const third = await t.request(two, 'POST', '/v1/status-keys/c-3', { value: 'X' })
    assert.equal(third.statusCode, 402)
  })

  it('the built-in free plan allows 25 statuses', async (ctx) => {
    const t = await makeApp(ctx)
    const user = await t.user({ plan: 'free' })
    for (let i = 1; i <= 25; i++) {
      const res = await t.request(user, 'POST', `/v1/status-keys/status-${i}`, { value: 'X' })
      assert.equal(res.statusCode, 201, `status ${i}`)
    }
    const res = await t.request(user, 'POST', '/v1/status-keys/status-26', { value: 'X' })
    assert.equal(res.statusCode, 402)
    assert.equal(res.json().errorCode, 'planLimitReached')
  })
})

describe('request rate', () => {
  const plans: Plans = { limited: plan({ requestsPerMinute: 3 }), open: plan({}) }

  it('over requestsPerMinute is 429 rateLimited with Retry-After and X-RateLimit-*', async (ctx) => {
    const t = await makeApp(ctx, { plans })
    const user = await t.user({ plan: 'limited' })
    for (const remaining of ['2', '1', '0']) {
      const res = await t.request(user, 'GET', '/v1/user/status')
      assert.equal(res.statusCode, 200)
      assert.equal(res.headers['x-ratelimit-limit'], '3')
      assert.equal(res.headers['x-ratelimit-remaining'], remaining)
      assert.ok(res.headers['x-ratelimit-reset'] !== undefined, 'x-ratelimit-reset')
    }
    const res = await t.request(user, 'GET', '/v1/user/status')
    assert.equal(res.statusCode, 429, res.body)
    const body = res.json()
    assert.equal(body.errorCode, 'rateLimited')
    assert.equal(typeof body.message, 'string')
    assert.equal(body.requestId, res.headers['x-request-id'])
    const retryAfter = Number(res.headers['retry-after'])
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, 'Retry-After')
    assert.equal(res.headers['x-ratelimit-limit'], '3')
    assert.equal(res.headers['x-ratelimit-remaining'], '0')
    assert.ok(res.headers['x-ratelimit-reset'] !== undefined)
  })

  it('a request refused for its rate changes nothing', async (ctx) => {
    const t = await makeApp(ctx, { plans })
    const user = await t.user({ plan: 'limited' })
    const created = await t.request(user, 'POST', '/v1/status-keys/lamp', { value: 'ON' })
    assert.equal(created.statusCode, 201)
    await t.request(user, 'GET', '/v1/user/status')
    await t.request(user, 'GET', '/v1/user/status')
    const update = await t.request(user, 'POST', '/v1/status-keys/lamp', { value: 'OFF' })
    const create = await t.request(user, 'POST', '/v1/status-keys/other', { value: 'ON' })
    assert.deepEqual([update.statusCode, create.statusCode], [429, 429])
    const rows = await t.database.db
      .selectFrom('statuses')
      .select(['status_key', 'value', 'change_count'])
      .execute()
    assert.deepEqual(rows, [{ status_key: 'lamp', value: 'ON', change_count: 1 }])
  })

  it("one user's limit does not affect another's", async (ctx) => {
    const t = await makeApp(ctx, { plans })
    const busy = await t.user({ plan: 'limited' })
    const calm = await t.user({ plan: 'limited' })
    for (let i = 0; i < 4; i++) await t.request(busy, 'GET', '/v1/user/status')
    assert.equal((await t.request(busy, 'GET', '/v1/user/status')).statusCode, 429)
    const res = await t.request(calm, 'GET', '/v1/user/status')
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['x-ratelimit-remaining'], '2')
  })

  it('the limit is per user, not per key', async (ctx) => {
    const t = await makeApp(ctx, { plans })
    const user = await t.user({ plan: 'limited' })
    const second = { id: user.id, key: (await createApiKey(t.database.db, user.id)).key }
    for (let i = 0; i < 3; i++) await t.request(user, 'GET', '/v1/user/status')
    assert.equal((await t.request(second, 'GET', '/v1/user/status')).statusCode, 429)
  })

  it('a plan with requestsPerMinute null is not limited', async (ctx) => {
    const t = await makeApp(ctx, { plans })
    const user = await t.user({ plan: 'open' })
    for (let i = 0; i < 80; i++)
      assert.equal((await t.request(user, 'GET', '/v1/user/status')).statusCode, 200)
  })
})

test('the built-in free plan allows 60 requests a minute', async (ctx) => {
  const t = await makeApp(ctx)
  const user = await t.user({ plan: 'free' })
  for (let i = 0; i < 60; i++)
    assert.equal((await t.request(user, 'GET', '/v1/checkAuth')).statusCode, 200, `request ${i}`)
  const res = await t.request(user, 'GET', '/v1/checkAuth')
  assert.equal(res.statusCode, 429)
  assert.equal(res.headers['x-ratelimit-limit'], '60')
})
