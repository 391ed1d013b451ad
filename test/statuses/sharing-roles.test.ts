import assert from 'node:assert/strict'
import { test } from 'node:test'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus, grant, makeCast } from '../helpers/sharing.ts'

/** A public and a private status of the owner; the updater holds `updater` on the private one. */
async function world(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const cast = await makeCast(t)
  const open = await createStatus(t, cast.owner, 'open', { value: 'ON', accessType: 'public' })
  const closed = await createStatus(t, cast.owner, 'closed', { value: 'ON', name: 'Secret' })
  await grant(t, cast.owner, closed.id, cast.updater, 'updater')
  const unverified = await t.user({ verified: false })
  return {
    t,
    users: { ...cast, unverified },
    vars: {
      open: open.id,
      closed: closed.id,
      ownerId: cast.owner.id,
      updaterId: cast.updater.id,
      strangerId: cast.stranger.id,
      subscriberId: cast.subscriber.id,
    },
  }
}

const as = (ctx: ScenarioContext, who: string) => ctx.users[who] ?? null

runScenarios('granting and revoking roles (owner only)', world, [
  {
    name: 'PUT …/users/:userId offers a role: 202 with a pending invitation, the role once accepted',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{strangerId}',
    body: { role: 'subscriber' },
    expectStatus: 202,
    expect: async (body, ctx) => {
      assert.equal(body.userId, ctx.vars.strangerId)
      assert.equal(body.role, 'subscriber')
      const stranger = as(ctx, 'stranger')
      const before = await ctx.t.request(stranger, 'GET', `/v1/status/${ctx.vars.closed}`)
      assert.equal(before.statusCode, 404, 'no role before accepting')
      const accepted = await ctx.t.request(
        stranger,
        'POST',
        `/v1/user/invitations/${body.id}/accept`,
      )
      assert.equal(accepted.statusCode, 200, accepted.body)
      const read = await ctx.t.request(stranger, 'GET', `/v1/status/${ctx.vars.closed}`)
      assert.equal(read.statusCode, 200, 'a subscriber reads the private status')
    },
  },
  {
    name: 'PUT a lower role changes it at once: 200',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{updaterId}',
    body: { role: 'subscriber' },
    expectStatus: 200,
    expect: async (body, ctx) => {
      assert.equal(body.role, 'subscriber')
      const patch = await ctx.t.request(
        as(ctx, 'updater'),
        'PATCH',
        `/v1/status/${ctx.vars.closed}`,
        {
          value: 'X',
        },
      )
      assert.equal(patch.statusCode, 403, 'no longer an updater')
    },
  },
  {
    name: 'PUT the same role again is idempotent: 200',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{updaterId}',
    body: { role: 'updater' },
    expectStatus: 200,
  },
  {
    name: 'granting to an unknown user → 404 notFound',
    method: 'PUT',
    url: '/v1/status/{closed}/users/noSuchUser0000000000',
    body: { role: 'updater' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'granting a role to the owner themself → 409 conflict',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{ownerId}',
    body: { role: 'subscriber' },
    expectStatus: 409,
    expectErrorCode: 'conflict',
  },
  {
    name: 'the role owner cannot be granted → 400 validationError',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{strangerId}',
    body: { role: 'owner' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (body) => assert.equal(body.errors[0].field, 'role'),
  },
  {
    name: 'a grant without a role → 400 validationError',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{strangerId}',
    body: {},
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'an updater may not grant roles → 403 forbidden',
    as: 'updater',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{strangerId}',
    body: { role: 'updater' },
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'a stranger granting on a public status they can see → 403 forbidden',
    as: 'stranger',
    method: 'PUT',
    url: '/v1/status/{open}/users/{strangerId}',
    body: { role: 'updater' },
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'a stranger granting on a private status → 404, not 403',
    as: 'stranger',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{strangerId}',
    body: { role: 'updater' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'DELETE …/users/:userId revokes: 204, and the private status is hidden again',
    method: 'DELETE',
    url: '/v1/status/{closed}/users/{updaterId}',
    expectStatus: 204,
    expect: async (_body, ctx) => {
      const read = await ctx.t.request(as(ctx, 'updater'), 'GET', `/v1/status/${ctx.vars.closed}`)
      assert.equal(read.statusCode, 404)
    },
  },
  {
    name: 'revoking a user without a role or invitation → 404 notFound',
    method: 'DELETE',
    url: '/v1/status/{closed}/users/{strangerId}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'revoking the owner → 409 conflict',
    method: 'DELETE',
    url: '/v1/status/{closed}/users/{ownerId}',
    expectStatus: 409,
    expectErrorCode: 'conflict',
  },
  {
    name: 'an updater may not revoke roles → 403 forbidden',
    as: 'updater',
    method: 'DELETE',
    url: '/v1/status/{closed}/users/{updaterId}',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
])

runScenarios('subscribing to a status', world, [
  {
    name: 'POST …/subscription on a public status: 201, the caller becomes a subscriber',
    as: 'stranger',
    method: 'POST',
    url: '/v1/status/{open}/subscription',
    expectStatus: 201,
    expect: async (body, ctx) => {
      assert.deepEqual(body, {
        statusId: ctx.vars.open,
        statusKey: null, // the owner's alone (docs/api.md#the-status-object)
        shareId: body.shareId,
        name: 'open',
        role: 'subscriber',
      })
      const again = await ctx.t.request(
        as(ctx, 'stranger'),
        'POST',
        `/v1/status/${ctx.vars.open}/subscription`,
      )
      assert.equal(again.statusCode, 200, 'subscribing twice is fine: 200')
    },
  },
  {
    name: 'POST …/subscription on a private status without a role → 404',
    as: 'stranger',
    method: 'POST',
    url: '/v1/status/{closed}/subscription',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'POST …/subscription keeps a stronger role: the updater stays updater (200)',
    as: 'updater',
    method: 'POST',
    url: '/v1/status/{closed}/subscription',
    expectStatus: 200,
    expect: (body) => assert.equal(body.role, 'updater'),
  },
  {
    name: 'the owner cannot subscribe to their own status → 409 conflict',
    method: 'POST',
    url: '/v1/status/{open}/subscription',
    expectStatus: 409,
    expectErrorCode: 'conflict',
  },
  {
    name: 'subscribing needs a verified user → 403 notVerified',
    as: 'unverified',
    method: 'POST',
    url: '/v1/status/{open}/subscription',
    expectStatus: 403,
    expectErrorCode: 'notVerified',
  },
  {
    name: 'DELETE …/subscription leaves: 204, then 404 the second time',
    as: 'updater',
    method: 'DELETE',
    url: '/v1/status/{closed}/subscription',
    expectStatus: 204,
    expect: async (_body, ctx) => {
      const again = await ctx.t.request(
        as(ctx, 'updater'),
        'DELETE',
        `/v1/status/${ctx.vars.closed}/subscription`,
      )
      assert.equal(again.statusCode, 404, 'the private status is hidden now')
    },
  },
  {
    name: 'DELETE …/subscription without a role on a public status → 404',
    as: 'stranger',
    method: 'DELETE',
    url: '/v1/status/{open}/subscription',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'the owner cannot leave their own status → 409 conflict',
    method: 'DELETE',
    url: '/v1/status/{open}/subscription',
    expectStatus: 409,
    expectErrorCode: 'conflict',
  },
  {
    name: 'GET /v1/user/subscriptions lists statuses with a role, not owned ones',
    as: 'updater',
    method: 'GET',
    url: '/v1/user/subscriptions',
    expectStatus: 200,
    expect: (body, ctx) =>
      assert.deepEqual(body, [
        {
          statusId: ctx.vars.closed,
          statusKey: null, // the owner's alone (docs/api.md#the-status-object)
          shareId: body[0].shareId,
          name: 'Secret',
          role: 'updater',
        },
      ]),
  },
  {
    name: 'the owner follows nothing: their own statuses are not subscriptions',
    method: 'GET',
    url: '/v1/user/subscriptions',
    expectStatus: 200,
    expect: (body) => assert.deepEqual(body, []),
  },
  {
    name: 'deleting a status removes it from its followers’ subscriptions',
    method: 'DELETE',
    url: '/v1/status/{closed}',
    expectStatus: 204,
    expect: async (_body, ctx) => {
      const res = await ctx.t.request(as(ctx, 'updater'), 'GET', '/v1/user/subscriptions')
      assert.deepEqual(res.json(), [])
    },
  },
])

test('subscriptions and user list page like the list: ?limit and Link rel="next"', async (ctx) => {
  const t = await makeApp(ctx)
  const cast = await makeCast(t)
  const ids: string[] = []
  for (let i = 0; i < 5; i++) {
    const s = await createStatus(t, cast.owner, `s-${i}`, { value: 'X', accessType: 'public' })
    const res = await t.request(cast.subscriber, 'POST', `/v1/status/${s.id}/subscription`)
    assert.equal(res.statusCode, 201)
    ids.push(s.id)
  }
  const follow = async (user: typeof cast.owner, first: string) => {
    const seen: unknown[] = []
    let url: string | undefined = first
    let pages = 0
    while (url) {
      const res = await t.request(user, 'GET', url)
      assert.equal(res.statusCode, 200, res.body)
      seen.push(...res.json())
      const link = res.headers.link as string | undefined
      url = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined
      pages += 1
    }
    return { seen, pages }
  }
  const subs = await follow(cast.subscriber, '/v1/user/subscriptions?limit=2')
  assert.equal(subs.pages, 3)
  assert.deepEqual(
    subs.seen.map((s) => (s as { statusId: string }).statusId),
    ids,
    'every subscription once, in subscription order',
  )

  const target = ids[0] as string
  await grant(t, cast.owner, target, cast.updater, 'updater')
  await grant(t, cast.owner, target, cast.stranger, 'subscriber')
  const all = (await t.request(cast.owner, 'GET', `/v1/status/${target}/users`)).json()
  assert.equal(all.length, 4)
  for (const limit of [1, 2, 3]) {
    const paged = await follow(cast.owner, `/v1/status/${target}/users?limit=${limit}`)
    assert.deepEqual(paged.seen, all, `limit=${limit}: the same entries, owner first`)
  }
})
