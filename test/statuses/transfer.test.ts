import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { it } from 'node:test'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus, grant, makeCast } from '../helpers/sharing.ts'
import { SseTestClient } from '../helpers/sse.ts'

// Handing a status to another user (docs/sharing.md#transfer).

/** Who owns the status, under which key, and the role rows on it as [userId, role]. */
async function stateOf(t: TestApp, statusId: string) {
  const status = await t.database.db
    .selectFrom('statuses')
    .select(['owner_id', 'status_key'])
    .where('id', '=', statusId)
    .executeTakeFirstOrThrow()
  const roles = await t.database.db
    .selectFrom('status_roles')
    .select(['user_id', 'role'])
    .where('status_id', '=', statusId)
    .orderBy('user_id')
    .execute()
  return {
    owner: status.owner_id,
    key: status.status_key,
    roles: roles.map((r) => [r.user_id, r.role]).sort(),
  }
}

/** The security events of a kind recorded for a user, as their parsed details. */
const eventsOf = async (t: TestApp, userId: string, kind: string) =>
  (
    await t.database.db
      .selectFrom('security_events')
      .select('detail')
      .where('user_id', '=', userId)
      .where('kind', '=', kind)
      .execute()
  ).map((r) => JSON.parse(r.detail ?? 'null'))

/**
 * Olivia owns "Desk" (key `desk`; Uma updates it, Sam follows it), offered to Uma, and "Lamp"
 * (key `lamp`), offered to Stan, who owns a status by the key `lamp` himself.
 */
async function transferWorld(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const cast = await makeCast(t)
  const desk = await createStatus(t, cast.owner, 'desk', { value: 'ON', name: 'Desk' })
  const lamp = await createStatus(t, cast.owner, 'lamp', { value: 'ON', name: 'Lamp' })
  await createStatus(t, cast.stranger, 'lamp', { value: 'OFF', name: 'My lamp' })
  await grant(t, cast.owner, desk.id, cast.updater, 'updater')
  await grant(t, cast.owner, desk.id, cast.subscriber, 'subscriber')
  const offer = async (statusId: string, user: TestUser) => {
    const res = await t.request(cast.owner, 'POST', `/v1/status/${statusId}/transfer`, {
      userId: user.id,
    })
    assert.equal(res.statusCode, 202, res.body)
    return res.json().id as string
  }
  return {
    t,
    users: cast as unknown as Record<string, TestUser>,
    vars: {
      desk: desk.id,
      lamp: lamp.id,
      deskOffer: await offer(desk.id, cast.updater),
      lampOffer: await offer(lamp.id, cast.stranger),
      ownerId: cast.owner.id,
      updaterId: cast.updater.id,
      subscriberId: cast.subscriber.id,
      strangerId: cast.stranger.id,
    },
  }
}

const who = (ctx: ScenarioContext, name: string) => ctx.users[name] as TestUser

/** Desk as the world made it: Olivia's, `desk`, Uma updater, Sam subscriber. */
const deskAsItWas = (ctx: ScenarioContext) => ({
  owner: ctx.vars.ownerId,
  key: 'desk',
  roles: [
    [ctx.vars.subscriberId, 'subscriber'],
    [ctx.vars.updaterId, 'updater'],
  ].sort(),
})

runScenarios('a transfer is a pending invitation for the role owner', transferWorld, [
  {
    name: 'the owner offers the status: 202, a pending invitation for the role owner; nothing changes yet',
    method: 'POST',
    url: '/v1/status/{desk}/transfer',
    body: '{"userId":"{strangerId}"}',
    expectStatus: 202,
    expect: async (body, ctx) => {
      assert.equal(body.role, 'owner')
      assert.equal(body.statusId, ctx.vars.desk)
      assert.equal(body.statusName, 'Desk')
      assert.equal(body.userId, ctx.vars.strangerId)
      assert.deepEqual(body.invitedBy, { userId: ctx.vars.ownerId, name: 'Olivia Owner' })
      const mine = await ctx.t.request(who(ctx, 'stranger'), 'GET', '/v1/user/invitations')
      assert.ok(mine.json().some((i: { id: string }) => i.id === body.id))
      assert.deepEqual(await stateOf(ctx.t, ctx.vars.desk as string), deskAsItWas(ctx))
    },
  },
  {
    name: 'a new offer withdraws the earlier one: one transfer is pending per status',
    method: 'POST',
    url: '/v1/status/{desk}/transfer',
    body: '{"userId":"{strangerId}"}',
    expectStatus: 202,
    expect: async (_body, ctx) => {
      const uma = await ctx.t.request(who(ctx, 'updater'), 'GET', '/v1/user/invitations')
      assert.deepEqual(uma.json(), [])
      const accepted = await ctx.t.request(
        who(ctx, 'updater'),
        'POST',
        `/v1/user/invitations/${ctx.vars.deskOffer}/accept`,
      )
      assert.equal(accepted.statusCode, 404)
    },
  },
  {
    name: 'the offer is recorded for both users: statusTransferOffered',
    method: 'POST',
    url: '/v1/status/{desk}/transfer',
    body: '{"userId":"{subscriberId}"}',
    expectStatus: 202,
    expect: async (_body, ctx) => {
      const detail = {
        statusId: ctx.vars.desk,
        from: ctx.vars.ownerId,
        to: ctx.vars.subscriberId,
        pending: true,
      }
      for (const userId of [ctx.vars.ownerId, ctx.vars.subscriberId] as string[])
        assert.deepEqual(
          (await eventsOf(ctx.t, userId, 'statusTransferOffered')).filter(
            (d) => d.to === ctx.vars.subscriberId,
          ),
          [detail],
        )
    },
  },
  {
    name: 'an updater may not offer the status: 403',
    as: 'updater',
    method: 'POST',
    url: '/v1/status/{desk}/transfer',
    body: '{"userId":"{strangerId}"}',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'someone who cannot see the status: 404',
    as: 'stranger',
    method: 'POST',
    url: '/v1/status/{desk}/transfer',
    body: '{"userId":"{strangerId}"}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'offering the status to its owner: 409',
    method: 'POST',
    url: '/v1/status/{desk}/transfer',
    body: '{"userId":"{ownerId}"}',
    expectStatus: 409,
    expectErrorCode: 'conflict',
  },
  {
    name: 'offering it to a user who does not exist: 404, and the pending offer stays',
    method: 'POST',
    url: '/v1/status/{desk}/transfer',
    body: { userId: 'no-such-user' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => {
      const uma = await ctx.t.request(who(ctx, 'updater'), 'GET', '/v1/user/invitations')
      assert.deepEqual(
        uma.json().map((i: { id: string }) => i.id),
        [ctx.vars.deskOffer],
      )
    },
  },
  {
    name: 'a body without userId: 400',
    method: 'POST',
    url: '/v1/status/{desk}/transfer',
    body: {},
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'accepted: the invitee owns the status under its key, the previous owner updates it',
    as: 'updater',
    method: 'POST',
    url: '/v1/user/invitations/{deskOffer}/accept',
    expectStatus: 200,
    expect: async (body, ctx) => {
      assert.deepEqual(body, {
        statusId: ctx.vars.desk,
        statusKey: 'desk',
        shareId: body.shareId,
        name: 'Desk',
        role: 'owner',
        keyKept: true,
      })
      assert.deepEqual(await stateOf(ctx.t, ctx.vars.desk as string), {
        owner: ctx.vars.updaterId,
        key: 'desk',
        roles: [
          [ctx.vars.ownerId, 'updater'],
          [ctx.vars.subscriberId, 'subscriber'],
        ].sort(),
      })
      // the new owner reaches it by key; the previous one sees it as an updater does
      const byKey = await ctx.t.request(who(ctx, 'updater'), 'GET', '/v1/status-keys/desk')
      assert.equal(byKey.statusCode, 200, byKey.body)
      const old = await ctx.t.request(who(ctx, 'owner'), 'GET', `/v1/status/${ctx.vars.desk}`)
      assert.equal(old.json().statusKey, null)
      const set = await ctx.t.request(who(ctx, 'owner'), 'PATCH', `/v1/status/${ctx.vars.desk}`, {
        value: 'OFF',
      })
      assert.equal(set.statusCode, 200, set.body)
      const again = await ctx.t.request(
        who(ctx, 'owner'),
        'POST',
        `/v1/status/${ctx.vars.desk}/transfer`,
        { userId: ctx.vars.strangerId },
      )
      assert.equal(again.statusCode, 403)
    },
  },
  {
    name: 'accepted: recorded for both users as statusTransferred',
    as: 'updater',
    method: 'POST',
    url: '/v1/user/invitations/{deskOffer}/accept',
    expectStatus: 200,
    expect: async (_body, ctx) => {
      const detail = {
        statusId: ctx.vars.desk,
        from: ctx.vars.ownerId,
        to: ctx.vars.updaterId,
        keyKept: true,
      }
      for (const userId of [ctx.vars.ownerId, ctx.vars.updaterId] as string[])
        assert.deepEqual(await eventsOf(ctx.t, userId, 'statusTransferred'), [detail])
    },
  },
  {
    name: 'accepted by a user who owns a status by its key: its key becomes null, and the answer says so',
    as: 'stranger',
    method: 'POST',
    url: '/v1/user/invitations/{lampOffer}/accept',
    expectStatus: 200,
    expect: async (body, ctx) => {
      assert.equal(body.statusKey, null)
      assert.equal(body.keyKept, false)
      const state = await stateOf(ctx.t, ctx.vars.lamp as string)
      assert.equal(state.owner, ctx.vars.strangerId)
      assert.equal(state.key, null)
      // his own `lamp` is as it was
      const own = await ctx.t.request(who(ctx, 'stranger'), 'GET', '/v1/status-keys/lamp')
      assert.equal(own.json().name, 'My lamp')
    },
  },
  {
    name: 'accepted twice: 404, the first acceptance stands',
    as: 'updater',
    method: 'POST',
    url: '/v1/user/invitations/{deskOffer}/accept',
    expectStatus: 200,
    expect: async (_body, ctx) => {
      const twice = await ctx.t.request(
        who(ctx, 'updater'),
        'POST',
        `/v1/user/invitations/${ctx.vars.deskOffer}/accept`,
      )
      assert.equal(twice.statusCode, 404)
      assert.equal((await stateOf(ctx.t, ctx.vars.desk as string)).owner, ctx.vars.updaterId)
    },
  },
  {
    name: 'someone else cannot accept it: 404, and all is as it was',
    as: 'subscriber',
    method: 'POST',
    url: '/v1/user/invitations/{deskOffer}/accept',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => {
      assert.deepEqual(await stateOf(ctx.t, ctx.vars.desk as string), deskAsItWas(ctx))
    },
  },
  {
    name: 'declined: all is as it was, the invitee keeps the role they had',
    as: 'updater',
    method: 'POST',
    url: '/v1/user/invitations/{deskOffer}/decline',
    expectStatus: 204,
    expect: async (_body, ctx) => {
      assert.deepEqual(await stateOf(ctx.t, ctx.vars.desk as string), deskAsItWas(ctx))
    },
  },
  {
    name: 'withdrawn by the owner: all is as it was, the invitee keeps the role they had',
    method: 'DELETE',
    url: '/v1/status/{desk}/transfer',
    expectStatus: 204,
    expect: async (_body, ctx) => {
      assert.deepEqual(await stateOf(ctx.t, ctx.vars.desk as string), deskAsItWas(ctx))
      const accepted = await ctx.t.request(
        who(ctx, 'updater'),
        'POST',
        `/v1/user/invitations/${ctx.vars.deskOffer}/accept`,
      )
      assert.equal(accepted.statusCode, 404)
    },
  },
  {
    name: 'withdrawing when no transfer is pending: 404',
    method: 'DELETE',
    url: '/v1/status/{lamp}/transfer',
    expectStatus: 204,
    expect: async (_body, ctx) => {
      const again = await ctx.t.request(
        who(ctx, 'owner'),
        'DELETE',
        `/v1/status/${ctx.vars.lamp}/transfer`,
      )
      assert.equal(again.statusCode, 404)
    },
  },
  {
    name: 'an updater may not withdraw it: 403',
    as: 'updater',
    method: 'DELETE',
    url: '/v1/status/{desk}/transfer',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
])

it('a transfer the new owner’s plan has no room for: 402, and all is as it was', async (t) => {
  const app = await makeApp(t)
  const owner = await app.user({ name: 'Olivia Owner' })
  const full = await app.user({ name: 'Fay Full', plan: 'free' })
  const status = await createStatus(app, owner, 'desk', { value: 'ON' })
  // the free plan's limit, reached
  for (let i = 0; i < 25; i += 1) await createStatus(app, full, `status-${i}`, { value: 'ON' })
  const offer = await app.request(owner, 'POST', `/v1/status/${status.id}/transfer`, {
    userId: full.id,
  })
  assert.equal(offer.statusCode, 202, offer.body)
  const accepted = await app.request(full, 'POST', `/v1/user/invitations/${offer.json().id}/accept`)
  assert.equal(accepted.statusCode, 402, accepted.body)
  assert.deepEqual(await stateOf(app, status.id), { owner: owner.id, key: 'desk', roles: [] })
  // the offer stays, to accept once there is room
  const mine = await app.request(full, 'GET', '/v1/user/invitations')
  assert.equal(mine.json().length, 1)
})

it('open streams see the new owner at once: each reader’s view of the status is sent again', async (t) => {
  const app = await makeApp(t, { deps: { sse: { heartbeatMs: 50 } } })
  await app.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`
  const cast = await makeCast(app)
  const desk = await createStatus(app, cast.owner, 'desk', { value: 'ON', name: 'Desk' })
  await grant(app, cast.owner, desk.id, cast.updater, 'updater')
  const streams: SseTestClient[] = []
  t.after(() => {
    for (const s of streams) s.close()
  })
  const watch = async (user: TestUser) => {
    const stream = await SseTestClient.connect(`${base}/v1/status/${desk.id}/events`, {
      'service-api-key': user.key,
    })
    streams.push(stream)
    assert.equal(stream.status, 200)
    return stream
  }
  const olivia = await watch(cast.owner)
  const uma = await watch(cast.updater)
  const statusOf = async (stream: SseTestClient) => JSON.parse((await stream.nextEvent()).data)
  assert.equal((await statusOf(olivia)).statusKey, 'desk')
  assert.equal((await statusOf(uma)).statusKey, null)

  const offer = await app.request(cast.owner, 'POST', `/v1/status/${desk.id}/transfer`, {
    userId: cast.updater.id,
  })
  const accepted = await app.request(
    cast.updater,
    'POST',
    `/v1/user/invitations/${offer.json().id}/accept`,
  )
  assert.equal(accepted.statusCode, 200, accepted.body)
  // the key is the new owner's now; the previous owner's stream goes on, as an updater's
  assert.equal((await statusOf(uma)).statusKey, 'desk')
  assert.equal((await statusOf(olivia)).statusKey, null)
  await app.request(cast.owner, 'PATCH', `/v1/status/${desk.id}`, { value: 'OFF' })
  assert.equal((await statusOf(uma)).value, 'OFF')
  assert.equal((await statusOf(olivia)).value, 'OFF')
})
