import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { newId } from '../../src/lib/ids.ts'
import { sweepDeletedHistory } from '../../src/modules/statuses/history-sweep.ts'
import { asSession, GOOD_PASSWORD, sessionCookieOf, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus, grant } from '../helpers/sharing.ts'

// docs/api.md#notification-rules, docs/notifications.md#rules: one rule per user and status,
// about a status the user may read; subscribers get `{"when": "any"}` when they accept.

/** A channel of the user's, stored as the channels API would (the rule only names its id). */
async function addChannel(t: TestApp, user: TestUser): Promise<string> {
  const id = newId()
  const now = new Date().toISOString()
  await t.database.db
    .insertInto('channels')
    .values({
      id,
      user_id: user.id,
      type: 'webhook',
      name: 'hook',
      config: JSON.stringify({ url: 'https://example.com/hook', format: 'standard' }),
      secret: null,
      verified_at: now,
      failing_since: null,
      disabled_reason: null,
      created_at: now,
      updated_at: now,
    })
    .execute()
  return id
}

/** A key of the user's with only these scopes (and statuses). */
async function scopedKey(
  t: TestApp,
  user: TestUser,
  body: { scopes: string[]; statusIds?: string[] },
): Promise<TestUser> {
  const res = await t.request(user, 'POST', '/v1/user/api-keys', body)
  assert.equal(res.statusCode, 201, res.body)
  return { id: user.id, key: res.json().key }
}

const rulesOf = async (t: TestApp, statusId: string) =>
  t.database.db
    .selectFrom('notification_rules')
    .selectAll()
    .where('status_id', '=', statusId)
    .execute()

async function rulesWorld(ctx: Parameters<typeof makeApp>[0]): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user({ name: 'Olivia Owner', plan: 'pro' })
  const subscriber = await t.user({ name: 'Sam Subscriber' })
  const updater = await t.user({ name: 'Uma Updater' })
  const stranger = await t.user({ name: 'Stan Stranger' })
  const s = await createStatus(t, owner, 'room', { name: 'Room', value: 'FREE' })
  const open = await createStatus(t, owner, 'open', { name: 'Open', accessType: 'public' })
  const other = await createStatus(t, owner, 'other', { name: 'Other' })
  await grant(t, owner, s.id, subscriber, 'subscriber')
  await grant(t, owner, s.id, updater, 'updater')
  const ownerChannel = await addChannel(t, owner)
  const strangerChannel = await addChannel(t, stranger)
  return {
    t,
    users: {
      owner,
      subscriber,
      updater,
      stranger,
      readKey: await scopedKey(t, owner, { scopes: ['status:read'] }),
      valueKey: await scopedKey(t, owner, { scopes: ['status:value'] }),
      confinedKey: await scopedKey(t, owner, { scopes: ['status:*'], statusIds: [other.id] }),
      unverified: await t.user({ verified: false }),
    },
    vars: { id: s.id, open: open.id, ownerChannel, strangerChannel },
  }
}

const URL = '/v1/status/{id}/notifications'

runScenarios(`GET, PUT, DELETE /v1/status/:statusId/notifications [${TEST_ENGINE}]`, rulesWorld, [
  {
    name: 'GET without a rule: 200 with when null (not notified)',
    method: 'GET',
    url: URL,
    expectStatus: 200,
    expect: (body, ctx) =>
      assert.deepEqual(body, {
        statusId: ctx.vars.id,
        when: null,
        channels: null,
        byOthers: false,
        createdAt: null,
        updatedAt: null,
      }),
  },
  ...(
    [
      'any',
      'stale',
      { changesTo: ['BUSY', 'AWAY'] },
      { leaves: ['FREE'] },
      { changesTo: ['BUSY'], leaves: ['FREE', 'AWAY'] },
    ] as const
  ).map((when) => ({
    name: `PUT ${JSON.stringify(when)}: 200, the rule, and GET reads it back`,
    method: 'PUT' as const,
    url: URL,
    body: { when },
    expectStatus: 200,
    expect: async (body: Record<string, unknown>, ctx: ScenarioContext) => {
      assert.deepEqual(body.when, when)
      assert.equal(body.channels, null, 'all channels by default')
      assert.equal(body.byOthers, false, 'every change by default, your own included')
      assert.equal(typeof body.createdAt, 'string')
      const read = await ctx.t.request(
        ctx.users.owner ?? null,
        'GET',
        `/v1/status/${ctx.vars.id}/notifications`,
      )
      assert.deepEqual(read.json(), body)
    },
  })),
  {
    name: 'PUT with byOthers: 200, stored, and GET reads it back; a PUT without it turns it off',
    method: 'PUT',
    url: URL,
    body: { when: { changesTo: ['BUSY'], leaves: ['FREE'] }, byOthers: true },
    expectStatus: 200,
    expect: async (body, ctx) => {
      assert.equal(body.byOthers, true)
      const path = `/v1/status/${ctx.vars.id}/notifications`
      const read = await ctx.t.request(ctx.users.owner ?? null, 'GET', path)
      assert.deepEqual(read.json(), body)
      const replaced = await ctx.t.request(ctx.users.owner ?? null, 'PUT', path, { when: 'any' })
      assert.equal(replaced.json().byOthers, false, 'PUT replaces the whole rule')
    },
  },
  {
    name: 'PUT replaces the rule: one per user and status',
    method: 'PUT',
    url: URL,
    body: { when: 'stale' },
    expectStatus: 200,
    expect: async (_body, ctx) => {
      const again = await ctx.t.request(
        ctx.users.owner ?? null,
        'PUT',
        `/v1/status/${ctx.vars.id}/notifications`,
        { when: { leaves: ['FREE'] } },
      )
      assert.equal(again.statusCode, 200)
      const mine = (await rulesOf(ctx.t, ctx.vars.id as string)).filter(
        (r) => r.user_id === ctx.users.owner?.id,
      )
      assert.equal(mine.length, 1)
      assert.equal(mine[0]?.condition, '{"leaves":["FREE"]}')
    },
  },
  {
    name: 'PUT with channels of your own: 200, the rule names them',
    method: 'PUT',
    url: URL,
    body: '{"when":"any","channels":["{ownerChannel}"]}',
    headers: { 'content-type': 'application/json' },
    expectStatus: 200,
    expect: (body, ctx) => assert.deepEqual(body.channels, [ctx.vars.ownerChannel]),
  },
  {
    name: 'PUT with channels null: all of your channels',
    method: 'PUT',
    url: URL,
    body: { when: 'any', channels: null },
    expectStatus: 200,
    expect: (body) => assert.equal(body.channels, null),
  },
  {
    name: 'PUT naming an unknown channel: 422 validationError naming the field',
    method: 'PUT',
    url: URL,
    body: '{"when":"any","channels":["{ownerChannel}","nope"]}',
    headers: { 'content-type': 'application/json' },
    expectStatus: 422,
    expectErrorCode: 'validationError',
    expect: async (body, ctx) => {
      assert.deepEqual(body.errors, [
        { field: 'channels.1', message: 'is not one of your channels' },
      ])
      const read = await ctx.t.request(
        ctx.users.owner ?? null,
        'GET',
        `/v1/status/${ctx.vars.id}/notifications`,
      )
      assert.equal(read.json().when, null, 'a failed request changes no data')
    },
  },
  {
    name: "PUT naming someone else's channel: 422, as unknown",
    method: 'PUT',
    url: URL,
    body: '{"when":"any","channels":["{strangerChannel}"]}',
    headers: { 'content-type': 'application/json' },
    expectStatus: 422,
    expectErrorCode: 'validationError',
    expect: (body) => assert.equal(body.errors[0].field, 'channels.0'),
  },
  ...(
    [
      ['no when', {}],
      ['when null', { when: null }],
      ['an unknown when', { when: 'sometimes' }],
      ['changesTo empty', { when: { changesTo: [] } }],
      [
        'changesTo of 21 values',
        { when: { changesTo: Array.from({ length: 21 }, (_, i) => `V${i}`) } },
      ],
      ['a value of 11 characters', { when: { changesTo: ['ABCDEFGHIJK'] } }],
      ['an empty value', { when: { leaves: [''] } }],
      ['a value with a control character', { when: { leaves: ['A\u0007'] } }],
      ['a whitespace-only value', { when: { leaves: ['   '] } }],
      ['a value that is not text', { when: { changesTo: [3] } }],
      ['the same value twice', { when: { changesTo: ['A', 'A'] } }],
      ['a when object naming neither changesTo nor leaves', { when: {} }],
      ['leaves empty beside changesTo', { when: { changesTo: ['A'], leaves: [] } }],
      ['byOthers not a boolean', { when: 'any', byOthers: 'yes' }],
      ['byOthers null', { when: 'any', byOthers: null }],
      ['an unknown property in when', { when: { changesTo: ['A'], also: 1 } }],
      ['an unknown property', { when: 'any', mute: true }],
      ['channels empty', { when: 'any', channels: [] }],
      ['channels not an array', { when: 'any', channels: 'all' }],
    ] as const
  ).map(([what, body]) => ({
    name: `PUT with ${what}: 400 validationError`,
    method: 'PUT' as const,
    url: URL,
    body,
    expectStatus: 400,
    expectErrorCode: 'validationError',
  })),
  {
    name: 'PUT with 20 values: 200 (1 to 20 of them)',
    method: 'PUT',
    url: URL,
    body: { when: { changesTo: Array.from({ length: 20 }, (_, i) => `V${i}`) } },
    expectStatus: 200,
  },
  {
    name: 'a subscriber who accepted has {"when":"any"}',
    as: 'subscriber',
    method: 'GET',
    url: URL,
    expectStatus: 200,
    expect: (body) => {
      assert.equal(body.when, 'any')
      assert.equal(body.channels, null)
    },
  },
  {
    name: 'an updater who accepted has no rule (only subscribers get one)',
    as: 'updater',
    method: 'GET',
    url: URL,
    expectStatus: 200,
    expect: (body) => assert.equal(body.when, null),
  },
  {
    name: 'the subscriber turns it off: DELETE 204, then when null',
    as: 'subscriber',
    method: 'DELETE',
    url: URL,
    expectStatus: 204,
    expect: async (_body, ctx) => {
      const read = await ctx.t.request(
        ctx.users.subscriber ?? null,
        'GET',
        `/v1/status/${ctx.vars.id}/notifications`,
      )
      assert.equal(read.json().when, null)
      const again = await ctx.t.request(
        ctx.users.subscriber ?? null,
        'DELETE',
        `/v1/status/${ctx.vars.id}/notifications`,
      )
      assert.equal(again.statusCode, 204, 'turning off twice is harmless')
    },
  },
  {
    name: 'an updater may set a rule on a status they can read',
    as: 'updater',
    method: 'PUT',
    url: URL,
    body: { when: { changesTo: ['BUSY'] } },
    expectStatus: 200,
  },
  ...(['GET', 'PUT', 'DELETE'] as const).map((method) => ({
    name: `${method} by a stranger on a private status: 404, as reading it`,
    as: 'stranger',
    method,
    url: URL,
    ...(method === 'PUT' && { body: { when: 'any' } }),
    expectStatus: 404,
    expectErrorCode: 'notFound',
  })),
  {
    name: 'a stranger may set a rule on a public status (anyone who may read it)',
    as: 'stranger',
    method: 'PUT',
    url: '/v1/status/{open}/notifications',
    body: '{"when":"any","channels":["{strangerChannel}"]}',
    headers: { 'content-type': 'application/json' },
    expectStatus: 200,
  },
  {
    name: 'an unknown status: 404',
    method: 'PUT',
    url: '/v1/status/AAAAAAAAAAAAAAAAAAAAA/notifications',
    body: { when: 'any' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'no key: 401',
    as: null,
    method: 'GET',
    url: URL,
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
  {
    name: 'an unverified user: 403 notVerified',
    as: 'unverified',
    method: 'GET',
    url: URL,
    expectStatus: 403,
    expectErrorCode: 'notVerified',
  },
  {
    name: 'a key with status:read alone may set a rule (the scope rules need)',
    as: 'readKey',
    method: 'PUT',
    url: URL,
    body: { when: 'any' },
    expectStatus: 200,
  },
  ...(['GET', 'PUT', 'DELETE'] as const).map((method) => ({
    name: `${method} with a key lacking status:read: 403 insufficientScope`,
    as: 'valueKey',
    method,
    url: URL,
    ...(method === 'PUT' && { body: { when: 'any' } }),
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  })),
  {
    name: 'a key confined to other statuses: 404',
    as: 'confinedKey',
    method: 'PUT',
    url: URL,
    body: { when: 'any' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
])

describe(`notification rules: plan limit, defaults for subscribers, cleanup [${TEST_ENGINE}]`, () => {
  it('a new rule beyond the plan’s maxNotificationRules: 402 planLimitReached; replacing one is fine', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const free = await t.user({ plan: 'free' })
    const ids: string[] = []
    for (let i = 0; i < 26; i++)
      ids.push(
        (await createStatus(t, owner, `s${i}`, { name: `Status ${i}`, accessType: 'public' })).id,
      )
    for (const id of ids.slice(0, 25)) {
      const res = await t.request(free, 'PUT', `/v1/status/${id}/notifications`, { when: 'any' })
      assert.equal(res.statusCode, 200, res.body)
    }
    const over = await t.request(free, 'PUT', `/v1/status/${ids[25]}/notifications`, {
      when: 'any',
    })
    assert.equal(over.statusCode, 402, over.body)
    assert.equal(over.json().errorCode, 'planLimitReached')
    const replaced = await t.request(free, 'PUT', `/v1/status/${ids[0]}/notifications`, {
      when: 'stale',
    })
    assert.equal(replaced.statusCode, 200, 'replacing a rule adds none')
    const off = await t.request(free, 'DELETE', `/v1/status/${ids[0]}/notifications`)
    assert.equal(off.statusCode, 204)
    const now = await t.request(free, 'PUT', `/v1/status/${ids[25]}/notifications`, { when: 'any' })
    assert.equal(now.statusCode, 200, 'room again once one is gone')
  })

  it('a status created with a session gives its creator {"when":"any","byOthers":true}; they may remove it', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const { cookie } = await signUpUser(t, { email: 'ann@example.com', name: 'Ann' })
    const created = await asSession(t, cookie, 'POST', '/v1/status-keys/room-4', { value: 'FREE' })
    assert.equal(created.statusCode, 201, created.body)
    const id = created.json().id as string
    const path = `/v1/status/${id}/notifications`
    const rule = await asSession(t, cookie, 'GET', path)
    assert.equal(rule.statusCode, 200, rule.body)
    assert.equal(rule.json().when, 'any')
    assert.equal(rule.json().byOthers, true)
    assert.equal(rule.json().channels, null, 'all of the creator’s channels')
    const updated = await asSession(t, cookie, 'POST', '/v1/status-keys/room-4', { value: 'BUSY' })
    assert.equal(updated.statusCode, 200, 'a write to it creates nothing')
    const off = await asSession(t, cookie, 'DELETE', path)
    assert.equal(off.statusCode, 204)
    assert.equal((await asSession(t, cookie, 'GET', path)).json().when, null, 'removed, stays off')
    await asSession(t, cookie, 'POST', '/v1/status-keys/room-4', { value: 'FREE' })
    assert.equal((await asSession(t, cookie, 'GET', path)).json().when, null, 'not made again')
  })

  it('a status created with an API key gives its creator no rule', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const s = await createStatus(t, owner, 'ci', { name: 'Build', value: 'PASSING' })
    assert.deepEqual(await rulesOf(t, s.id), [])
  })

  it('a creator at their plan’s rule limit gets no creator rule (the status is created)', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const { id: userId, cookie } = await signUpUser(t, { email: 'fay@example.com', name: 'Fay' })
    await t.database.db
      .updateTable('users')
      .set({ plan: 'free' })
      .where('id', '=', userId)
      .execute()
    const owner = await t.user({ plan: 'pro' })
    for (let i = 0; i < 25; i++) {
      const s = await createStatus(t, owner, `p${i}`, { name: `Public ${i}`, accessType: 'public' })
      const res = await asSession(t, cookie, 'PUT', `/v1/status/${s.id}/notifications`, {
        when: 'any',
      })
      assert.equal(res.statusCode, 200, res.body)
    }
    const created = await asSession(t, cookie, 'POST', '/v1/status-keys/mine', { value: 'ON' })
    assert.equal(created.statusCode, 201, created.body)
    assert.deepEqual(await rulesOf(t, created.json().id), [])
  })

  it('accepting a subscriber invitation link turns {"when":"any"} on; an updater link does not', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const sam = await t.user()
    const uma = await t.user()
    const s = await createStatus(t, owner, 'desk', { name: 'Desk', value: 'ON' })
    for (const [user, role, expected] of [
      [sam, 'subscriber', 'any'],
      [uma, 'updater', null],
    ] as const) {
      const link = await t.request(owner, 'POST', `/v1/status/${s.id}/invitations`, { role })
      assert.equal(link.statusCode, 201, link.body)
      const token = (link.json().url as string).split('/invite/')[1]
      const accepted = await t.request(user, 'POST', `/v1/invitations/${token}/accept`)
      assert.equal(accepted.statusCode, 200, accepted.body)
      const rule = await t.request(user, 'GET', `/v1/status/${s.id}/notifications`)
      assert.equal(rule.json().when, expected, role)
    }
  })

  it('signing up through a subscriber invitation link turns {"when":"any"} on', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const s = await createStatus(t, owner, 'desk', { name: 'Desk', value: 'ON' })
    const link = await t.request(owner, 'POST', `/v1/status/${s.id}/invitations`, {
      role: 'subscriber',
    })
    const token = (link.json().url as string).split('/invite/')[1]
    const res = await t.request(null, 'POST', '/v1/auth/signup', {
      email: 'sam@example.com',
      name: 'Sam',
      password: GOOD_PASSWORD,
      invitation: token,
    })
    assert.equal(res.statusCode, 201, res.body)
    const cookie = sessionCookieOf(res)
    assert.ok(cookie)
    const rule = await asSession(t, cookie.value, 'GET', `/v1/status/${s.id}/notifications`)
    assert.equal(rule.statusCode, 200, rule.body)
    assert.equal(rule.json().when, 'any')
  })

  it('subscribing to a public status turns it on; leaving it removes the rule', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const sam = await t.user()
    const s = await createStatus(t, owner, 'open', { name: 'Open', accessType: 'public' })
    assert.equal((await t.request(sam, 'POST', `/v1/status/${s.id}/subscription`)).statusCode, 201)
    const on = await t.request(sam, 'GET', `/v1/status/${s.id}/notifications`)
    assert.equal(on.json().when, 'any')
    assert.equal(
      (await t.request(sam, 'DELETE', `/v1/status/${s.id}/subscription`)).statusCode,
      204,
    )
    const off = await t.request(sam, 'GET', `/v1/status/${s.id}/notifications`)
    assert.equal(off.json().when, null, 'leaving ends the notifications too')
  })

  it('a rule the subscriber set themselves is kept when they accept again; revoking the role removes it', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const sam = await t.user()
    const s = await createStatus(t, owner, 'open', { name: 'Open', accessType: 'public' })
    // a rule first (the status is public), then the subscriber role
    await t.request(sam, 'PUT', `/v1/status/${s.id}/notifications`, {
      when: { changesTo: ['DOWN'] },
    })
    await grant(t, owner, s.id, sam, 'subscriber')
    const kept = await t.request(sam, 'GET', `/v1/status/${s.id}/notifications`)
    assert.deepEqual(kept.json().when, { changesTo: ['DOWN'] }, 'their own rule stays')
    const revoked = await t.request(owner, 'DELETE', `/v1/status/${s.id}/users/${sam.id}`)
    assert.equal(revoked.statusCode, 204, revoked.body)
    assert.equal((await rulesOf(t, s.id)).length, 0, 'removed from the status, no longer told')
  })

  it('following a private share link turns {"when":"any"} on', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const sam = await t.user()
    const s = await createStatus(t, owner, 'secret', { name: 'Secret', value: 'ON' })
    const made = await t.request(owner, 'POST', `/v1/status/${s.id}/share-links`, {})
    assert.equal(made.statusCode, 201, made.body)
    const token = (made.json().url as string).split('/l/')[1]
    const followed = await t.request(sam, 'POST', `/v1/share-links/${token}/follow`)
    assert.ok(followed.statusCode === 200 || followed.statusCode === 201, followed.body)
    const rule = await t.request(sam, 'GET', `/v1/status/${s.id}/notifications`)
    assert.equal(rule.json().when, 'any')
  })

  it("a deleted status's rules go with its history (in the sweep's batches)", async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const s = await createStatus(t, owner, 'open', {
      name: 'Open',
      accessType: 'public',
      value: 'A',
    })
    for (let i = 0; i < 5; i++) {
      const u = await t.user()
      await t.request(u, 'PUT', `/v1/status/${s.id}/notifications`, { when: 'any' })
    }
    const kept = await createStatus(t, owner, 'kept', { name: 'Kept', accessType: 'public' })
    await t.request(owner, 'PUT', `/v1/status/${kept.id}/notifications`, { when: 'any' })
    assert.equal((await rulesOf(t, s.id)).length, 5)
    assert.equal((await t.request(owner, 'DELETE', `/v1/status/${s.id}`)).statusCode, 204)
    await sweepDeletedHistory({ db: t.database.db }, { batchSize: 2 })
    assert.equal((await rulesOf(t, s.id)).length, 0)
    assert.equal((await rulesOf(t, kept.id)).length, 1, "other statuses' rules stay")
  })
})
