import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { createMailer } from '../../src/lib/mailer.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { makeApp, TEST_PLANS, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus, grant, makeCast } from '../helpers/sharing.ts'
import { startSmtpServer } from '../helpers/smtp.ts'

// Invitations with consent and invitation links (docs/accounts.md#invitations,
// docs/accounts.md#invitation-links).

const DAY_MS = 24 * 60 * 60 * 1000
const START = Date.parse('2030-06-01T12:00:00.000Z')

/** A user with an e-mail address and a key. */
async function userWithEmail(t: TestApp, name: string, email: string): Promise<TestUser> {
  const user = await createUser(t.database.db, TEST_PLANS, {
    name,
    email,
    plan: 'unlimited',
    verified: true,
  })
  return { id: user.id, key: (await createApiKey(t.database.db, user.id)).key }
}

/** The role rows of a status, as [userId, role]. */
const rolesOn = async (t: TestApp, statusId: string) =>
  (
    await t.database.db
      .selectFrom('status_roles')
      .select(['user_id', 'role'])
      .where('status_id', '=', statusId)
      .orderBy('user_id')
      .execute()
  ).map((r) => [r.user_id, r.role])

/**
 * The owner's private status "Secret" (the updater holds `updater` on it, by invitation),
 * a public one, and a pending invitation of the stranger to be a subscriber of "Secret".
 */
async function consentWorld(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const cast = await makeCast(t)
  const closed = await createStatus(t, cast.owner, 'closed', { value: 'ON', name: 'Secret' })
  const open = await createStatus(t, cast.owner, 'open', { value: 'ON', accessType: 'public' })
  await grant(t, cast.owner, closed.id, cast.updater, 'updater')
  await grant(t, cast.owner, closed.id, cast.subscriber, 'subscriber')
  const offered = await t.request(
    cast.owner,
    'PUT',
    `/v1/status/${closed.id}/users/${cast.stranger.id}`,
    { role: 'subscriber' },
  )
  assert.equal(offered.statusCode, 202, offered.body)
  return {
    t,
    users: cast as unknown as Record<string, TestUser>,
    vars: {
      closed: closed.id,
      open: open.id,
      invitation: offered.json().id,
      ownerId: cast.owner.id,
      updaterId: cast.updater.id,
      subscriberId: cast.subscriber.id,
      strangerId: cast.stranger.id,
    },
  }
}

const who = (ctx: ScenarioContext, name: string) => ctx.users[name] as TestUser
const read = (ctx: ScenarioContext, name: string, statusId: string) =>
  ctx.t.request(who(ctx, name), 'GET', `/v1/status/${statusId}`)

runScenarios('invitations with consent: a role is never imposed', consentWorld, [
  {
    name: 'PUT …/users/:userId for a user without a role → 202 pending invitation, and no role yet',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{strangerId}',
    body: { role: 'updater' },
    expectStatus: 202,
    expect: async (body, ctx) => {
      assert.deepEqual(Object.keys(body).sort(), [
        'createdAt',
        'id',
        'invitedBy',
        'role',
        'statusId',
        'statusName',
        'userId',
      ])
      assert.equal(body.statusId, ctx.vars.closed)
      assert.equal(body.statusName, 'Secret')
      assert.equal(body.userId, ctx.vars.strangerId)
      assert.equal(body.role, 'updater')
      assert.deepEqual(body.invitedBy, { userId: ctx.vars.ownerId, name: 'Olivia Owner' })
      assert.equal((await read(ctx, 'stranger', ctx.vars.closed as string)).statusCode, 404)
      assert.deepEqual(
        (await rolesOn(ctx.t, ctx.vars.closed as string)).filter(
          ([id]) => id === (ctx.vars.strangerId as string),
        ),
        [],
      )
    },
  },
  {
    name: 'a new invitation replaces the pending one: the old id is gone',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{strangerId}',
    body: { role: 'updater' },
    expectStatus: 202,
    expect: async (body, ctx) => {
      assert.notEqual(body.id, ctx.vars.invitation)
      const mine = await ctx.t.request(who(ctx, 'stranger'), 'GET', '/v1/user/invitations')
      assert.deepEqual(
        mine.json().map((i: { id: string; role: string }) => [i.id, i.role]),
        [[body.id, 'updater']],
      )
      const old = await ctx.t.request(
        who(ctx, 'stranger'),
        'POST',
        `/v1/user/invitations/${ctx.vars.invitation}/accept`,
      )
      assert.equal(old.statusCode, 404)
    },
  },
  {
    name: 'the invitee sees the invitation: the status name and the inviter, nothing more of a private status',
    as: 'stranger',
    method: 'GET',
    url: '/v1/user/invitations',
    expectStatus: 200,
    expect: async (body, ctx) => {
      assert.equal(body.length, 1)
      assert.equal(body[0].id, ctx.vars.invitation)
      assert.equal(body[0].statusName, 'Secret')
      assert.equal(body[0].invitedBy.name, 'Olivia Owner')
      assert.equal(body[0].value, undefined, 'no value of a status they cannot see')
      assert.equal((await read(ctx, 'stranger', ctx.vars.closed as string)).statusCode, 404)
    },
  },
  {
    name: 'the invitee accepts → 200 with the role, which then lets them read; the invitation is gone',
    as: 'stranger',
    method: 'POST',
    url: '/v1/user/invitations/{invitation}/accept',
    expectStatus: 200,
    expect: async (body, ctx) => {
      assert.deepEqual(body, {
        statusId: ctx.vars.closed,
        statusKey: null,
        shareId: body.shareId,
        name: 'Secret',
        role: 'subscriber',
      })
      assert.equal((await read(ctx, 'stranger', ctx.vars.closed as string)).statusCode, 200)
      const left = await ctx.t.request(who(ctx, 'stranger'), 'GET', '/v1/user/invitations')
      assert.deepEqual(left.json(), [])
      const again = await ctx.t.request(
        who(ctx, 'stranger'),
        'POST',
        `/v1/user/invitations/${ctx.vars.invitation}/accept`,
      )
      assert.equal(again.statusCode, 404, 'accepting twice: the invitation is answered')
    },
  },
  {
    name: 'the invitee declines → 204: no role, the invitation is gone',
    as: 'stranger',
    method: 'POST',
    url: '/v1/user/invitations/{invitation}/decline',
    expectStatus: 204,
    expect: async (_body, ctx) => {
      assert.equal((await read(ctx, 'stranger', ctx.vars.closed as string)).statusCode, 404)
      const left = await ctx.t.request(who(ctx, 'stranger'), 'GET', '/v1/user/invitations')
      assert.deepEqual(left.json(), [])
      const pending = await ctx.t.request(
        who(ctx, 'owner'),
        'GET',
        `/v1/status/${ctx.vars.closed}/invitations/pending`,
      )
      assert.deepEqual(pending.json(), [])
    },
  },
  {
    name: "someone else's invitation: accept → 404, and it stays pending",
    as: 'subscriber',
    method: 'POST',
    url: '/v1/user/invitations/{invitation}/accept',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => {
      const mine = await ctx.t.request(who(ctx, 'stranger'), 'GET', '/v1/user/invitations')
      assert.equal(mine.json().length, 1)
    },
  },
  {
    name: "someone else's invitation: decline → 404, even the owner's",
    as: 'owner',
    method: 'POST',
    url: '/v1/user/invitations/{invitation}/decline',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'raising a subscriber to updater is an invitation too: 202, still a subscriber until accepting',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{subscriberId}',
    body: { role: 'updater' },
    expectStatus: 202,
    expect: async (body, ctx) => {
      const patch = () =>
        ctx.t.request(who(ctx, 'subscriber'), 'PATCH', `/v1/status/${ctx.vars.closed}`, {
          value: 'X',
        })
      assert.equal((await patch()).statusCode, 403, 'not an updater yet')
      const accepted = await ctx.t.request(
        who(ctx, 'subscriber'),
        'POST',
        `/v1/user/invitations/${body.id}/accept`,
      )
      assert.equal(accepted.json().role, 'updater')
      assert.equal((await patch()).statusCode, 200, 'an updater now')
    },
  },
  {
    name: 'lowering a role (updater → subscriber) takes effect at once: 200',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{updaterId}',
    body: { role: 'subscriber' },
    expectStatus: 200,
    expect: async (body, ctx) => {
      assert.deepEqual(body, {
        userId: ctx.vars.updaterId,
        name: 'Uma Updater',
        role: 'subscriber',
      })
      const patch = await ctx.t.request(
        who(ctx, 'updater'),
        'PATCH',
        `/v1/status/${ctx.vars.closed}`,
        { value: 'X' },
      )
      assert.equal(patch.statusCode, 403)
    },
  },
  {
    name: 'granting the role someone already has: 200, as it is',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{subscriberId}',
    body: { role: 'subscriber' },
    expectStatus: 200,
  },
  {
    name: 'the role someone has withdraws a pending raise: the owner’s latest word counts',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{subscriberId}',
    body: { role: 'updater' },
    expectStatus: 202,
    expect: async (body, ctx) => {
      const keep = await ctx.t.request(
        who(ctx, 'owner'),
        'PUT',
        `/v1/status/${ctx.vars.closed}/users/${ctx.vars.subscriberId}`,
        { role: 'subscriber' },
      )
      assert.equal(keep.statusCode, 200)
      const late = await ctx.t.request(
        who(ctx, 'subscriber'),
        'POST',
        `/v1/user/invitations/${body.id}/accept`,
      )
      assert.equal(late.statusCode, 404)
    },
  },
  {
    name: 'removing a role is immediate: DELETE → 204, the private status is hidden',
    method: 'DELETE',
    url: '/v1/status/{closed}/users/{subscriberId}',
    expectStatus: 204,
    expect: async (_body, ctx) =>
      assert.equal((await read(ctx, 'subscriber', ctx.vars.closed as string)).statusCode, 404),
  },
  {
    name: 'DELETE …/users/:userId withdraws a pending invitation: 204, the invitee no longer has it',
    method: 'DELETE',
    url: '/v1/status/{closed}/users/{strangerId}',
    expectStatus: 204,
    expect: async (_body, ctx) => {
      const mine = await ctx.t.request(who(ctx, 'stranger'), 'GET', '/v1/user/invitations')
      assert.deepEqual(mine.json(), [])
    },
  },
  {
    name: 'an updater inviting → 403 forbidden, and no invitation is made',
    as: 'updater',
    method: 'PUT',
    url: '/v1/status/{closed}/users/{strangerId}',
    body: { role: 'subscriber' },
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'the owner sees the pending invitations: GET …/invitations/pending',
    method: 'GET',
    url: '/v1/status/{closed}/invitations/pending',
    expectStatus: 200,
    expect: (body, ctx) =>
      assert.deepEqual(
        body.map((i: { id: string; userId: string; role: string }) => [i.id, i.userId, i.role]),
        [[ctx.vars.invitation, ctx.vars.strangerId, 'subscriber']],
      ),
  },
  {
    name: 'an updater may not see the pending invitations → 403 forbidden',
    as: 'updater',
    method: 'GET',
    url: '/v1/status/{closed}/invitations/pending',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'someone who cannot see the status learns nothing of its invitations → 404',
    as: 'stranger',
    method: 'GET',
    url: '/v1/status/{closed}/invitations/pending',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'the invitee sees their invitations unverified, and answers them',
    as: 'stranger',
    method: 'GET',
    url: '/v1/user/invitations?limit=1',
    expectStatus: 200,
    expect: async (_body, ctx) => {
      await ctx.t.database.db
        .updateTable('users')
        .set({ verified: 0 })
        .where('id', '=', ctx.vars.strangerId as string)
        .execute()
      const listed = await ctx.t.request(who(ctx, 'stranger'), 'GET', '/v1/user/invitations')
      assert.equal(listed.statusCode, 200, listed.body)
      assert.equal(listed.json().length, 1)
      const accepted = await ctx.t.request(
        who(ctx, 'stranger'),
        'POST',
        `/v1/user/invitations/${ctx.vars.invitation}/accept`,
      )
      assert.equal(accepted.statusCode, 200, accepted.body)
    },
  },
])

interface LinkWorld extends ScenarioContext {
  clock: TestClock
}

/** The owner's private status "Secret" with an updater; a test clock at START. */
async function linkWorld(ctx: Lifetime, publicUrl?: string): Promise<LinkWorld> {
  const clock = testClock(START)
  // with e-mail: a link bound to an address is mailed there (docs/accounts.md#invitation-links)
  const smtp = await startSmtpServer(ctx)
  const t = await makeApp(ctx, {
    deps: {
      clock,
      mailer: createMailer(smtp.url, 'statusd <statusd@example.com>'),
      ...(publicUrl && { publicUrl }),
    },
  })
  const cast = await makeCast(t)
  const closed = await createStatus(t, cast.owner, 'closed', { value: 'ON', name: 'Secret' })
  await grant(t, cast.owner, closed.id, cast.updater, 'updater')
  const alice = await userWithEmail(t, 'Alice', 'Alice@Example.com')
  return {
    t,
    clock,
    users: { ...cast, alice } as unknown as Record<string, TestUser>,
    vars: { closed: closed.id, strangerId: cast.stranger.id, aliceId: alice.id },
  }
}

/** The owner makes a link on "Secret"; its token and id. */
async function makeLink(
  w: ScenarioContext,
  body: Record<string, unknown> = { role: 'subscriber' },
) {
  const res = await w.t.request(
    who(w, 'owner'),
    'POST',
    `/v1/status/${w.vars.closed}/invitations`,
    body,
  )
  assert.equal(res.statusCode, 201, res.body)
  const created = res.json()
  const token = (/\/invite\/(sdi_\w+)$/.exec(created.url) as RegExpExecArray)[1] as string
  return { ...created, token }
}

const accept = (w: ScenarioContext, as: string, token: string) =>
  w.t.request(who(w, as), 'POST', `/v1/invitations/${token}/accept`)
const preview = (w: ScenarioContext, token: string) =>
  w.t.request(null, 'GET', `/v1/invitations/${token}`)

runScenarios('invitation links: made by the owner', linkWorld, [
  {
    name: "POST …/invitations → 201 with the URL (on the server's own address, never the request's Host), one use and 7 days by default",
    method: 'POST',
    url: '/v1/status/{closed}/invitations',
    headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' },
    body: { role: 'subscriber' },
    expectStatus: 201,
    expect: (body) => {
      assert.match(body.url, /^http:\/\/localhost\/invite\/sdi_[A-Za-z0-9]{43}$/)
      assert.equal(body.role, 'subscriber')
      assert.equal(body.usesLeft, 1)
      assert.equal(body.maxUses, 1)
      assert.equal(body.email, null)
      assert.equal(body.state, 'active')
      assert.equal(body.expiresAt, new Date(START + 7 * DAY_MS).toISOString())
    },
  },
  {
    name: 'a link bound to an e-mail address, with uses and an expiry: the address folded',
    method: 'POST',
    url: '/v1/status/{closed}/invitations',
    body: { role: 'updater', email: 'Bob@Example.COM', maxUses: 3, expiresAt: '2030-06-02' },
    expectStatus: 201,
    expect: (body) => {
      assert.equal(body.email, 'bob@example.com')
      assert.equal(body.usesLeft, 3)
      assert.equal(body.expiresAt, '2030-06-02T00:00:00.000Z')
    },
  },
  ...(
    [
      [{ role: 'subscriber', maxUses: 0 }, 'maxUses'],
      [{ role: 'subscriber', maxUses: 101 }, 'maxUses'],
      [{ role: 'subscriber', maxUses: '2' }, 'maxUses'],
      [{ role: 'owner' }, 'role'],
      [{}, 'role'],
      [{ role: 'subscriber', email: 'not-an-address' }, 'email'],
      [{ role: 'subscriber', expiresAt: '2030-06-01T11:00:00Z' }, 'expiresAt'],
      [{ role: 'subscriber', expiresAt: '2030-07-01T12:00:01Z' }, 'expiresAt'],
      [{ role: 'subscriber', expiresAt: 'next week' }, 'expiresAt'],
      [{ role: 'subscriber', token: 'sdi_mine' }, 'token'],
    ] as const
  ).map(([body, field]) => ({
    name: `a link with ${JSON.stringify(body)} → 400 validationError on ${field}, nothing made`,
    method: 'POST' as const,
    url: '/v1/status/{closed}/invitations',
    body,
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: async (b: { errors: { field: string }[] }, ctx: ScenarioContext) => {
      assert.ok(
        b.errors.some((e) => e.field === field),
        JSON.stringify(b.errors),
      )
      const list = await ctx.t.request(
        who(ctx, 'owner'),
        'GET',
        `/v1/status/${ctx.vars.closed}/invitations`,
      )
      assert.deepEqual(list.json(), [])
    },
  })),
  {
    name: 'exactly 30 days ahead is the longest a link may last',
    method: 'POST',
    url: '/v1/status/{closed}/invitations',
    body: { role: 'subscriber', expiresAt: '2030-07-01T12:00:00Z' },
    expectStatus: 201,
  },
  {
    name: 'an updater making a link → 403 forbidden',
    as: 'updater',
    method: 'POST',
    url: '/v1/status/{closed}/invitations',
    body: { role: 'updater' },
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'a stranger making a link on a private status → 404',
    as: 'stranger',
    method: 'POST',
    url: '/v1/status/{closed}/invitations',
    body: { role: 'updater' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'an updater listing the links → 403 forbidden',
    as: 'updater',
    method: 'GET',
    url: '/v1/status/{closed}/invitations',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'revoking an unknown link → 404',
    method: 'DELETE',
    url: '/v1/status/{closed}/invitations/Xdoesnotexist00000000',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
])

describe('invitation links: following and accepting', () => {
  it('the URL is on PUBLIC_URL when it is set', async (ctx) => {
    const w = await linkWorld(ctx, 'https://status.example.com')
    const link = await makeLink(w)
    assert.match(link.url, /^https:\/\/status\.example\.com\/invite\/sdi_/)
  })

  it('anyone holding the link sees what it offers (no key); the owner lists it, never its token', async (ctx) => {
    const w = await linkWorld(ctx)
    const link = await makeLink(w, { role: 'updater', maxUses: 2 })
    const res = await preview(w, link.token)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), {
      statusName: 'Secret',
      inviterName: 'Olivia Owner',
      role: 'updater',
      expiresAt: link.expiresAt,
    })
    assert.equal(res.headers['cache-control'], 'no-store')
    const list = await w.t.request(
      who(w, 'owner'),
      'GET',
      `/v1/status/${w.vars.closed}/invitations`,
    )
    assert.equal(list.statusCode, 200)
    const { url: _url, token: _token, mailed, ...entry } = link
    assert.equal(mailed, false, 'no address: nothing mailed')
    assert.deepEqual(list.json(), [entry])
    assert.ok(!list.body.includes(link.token))
    // only the hash is stored
    const stored = await w.t.database.db.selectFrom('invitation_links').selectAll().execute()
    assert.ok(!JSON.stringify(stored).includes(link.token))
  })

  it('accepting a link grants the role at once and spends a use; accepting twice spends nothing', async (ctx) => {
    const w = await linkWorld(ctx)
    const link = await makeLink(w, { role: 'subscriber', maxUses: 2 })
    assert.equal((await read(w, 'stranger', w.vars.closed as string)).statusCode, 404)
    const first = await accept(w, 'stranger', link.token)
    assert.equal(first.statusCode, 200, first.body)
    assert.equal(first.json().role, 'subscriber')
    assert.equal(first.json().statusId, w.vars.closed)
    assert.equal((await read(w, 'stranger', w.vars.closed as string)).statusCode, 200)
    const again = await accept(w, 'stranger', link.token)
    assert.equal(again.statusCode, 200, 'accepting twice: 200')
    const list = await w.t.request(
      who(w, 'owner'),
      'GET',
      `/v1/status/${w.vars.closed}/invitations`,
    )
    assert.equal(list.json()[0].usesLeft, 1, 'one use spent, not two')
  })

  it('a link for a lower role than one held spends nothing and lowers nothing', async (ctx) => {
    const w = await linkWorld(ctx)
    const link = await makeLink(w, { role: 'subscriber' })
    const res = await accept(w, 'updater', link.token)
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().role, 'updater')
    assert.equal((await preview(w, link.token)).statusCode, 200, 'the use is still there')
  })

  it('a link raises a subscriber to updater', async (ctx) => {
    const w = await linkWorld(ctx)
    await grant(w.t, who(w, 'owner'), w.vars.closed as string, who(w, 'stranger'), 'subscriber')
    const link = await makeLink(w, { role: 'updater' })
    const res = await accept(w, 'stranger', link.token)
    assert.equal(res.json().role, 'updater')
  })

  it('the owner accepting their own link → 409 conflict, no use spent', async (ctx) => {
    const w = await linkWorld(ctx)
    const link = await makeLink(w)
    const res = await accept(w, 'owner', link.token)
    assert.equal(res.statusCode, 409)
    assert.equal(res.json().errorCode, 'conflict')
    assert.equal((await preview(w, link.token)).statusCode, 200)
  })

  describe('a link that cannot be used: 404 forged, 410 gone, never a role', () => {
    const cases: {
      name: string
      spoil: (w: LinkWorld, link: { id: string; token: string }) => Promise<string>
      status: number
      errorCode: string
    }[] = [
      {
        name: 'forged (a token of the right shape no link has) → 404',
        spoil: async () => `sdi_${'A'.repeat(43)}`,
        status: 404,
        errorCode: 'notFound',
      },
      {
        name: 'a real token with one character changed → 404',
        spoil: async (_w, link) => link.token.slice(0, -1) + (link.token.endsWith('A') ? 'B' : 'A'),
        status: 404,
        errorCode: 'notFound',
      },
      {
        name: 'expired (the clock moved past its end) → 410',
        spoil: async (w, link) => {
          w.clock.advance(7 * DAY_MS)
          return link.token
        },
        status: 410,
        errorCode: 'gone',
      },
      {
        name: 'used up (its one use taken by someone else) → 410',
        spoil: async (w, link) => {
          assert.equal((await accept(w, 'alice', link.token)).statusCode, 200)
          return link.token
        },
        status: 410,
        errorCode: 'gone',
      },
      {
        name: 'revoked by the owner → 410',
        spoil: async (w, link) => {
          const res = await w.t.request(
            who(w, 'owner'),
            'DELETE',
            `/v1/status/${w.vars.closed}/invitations/${link.id}`,
          )
          assert.equal(res.statusCode, 204)
          const again = await w.t.request(
            who(w, 'owner'),
            'DELETE',
            `/v1/status/${w.vars.closed}/invitations/${link.id}`,
          )
          assert.equal(again.statusCode, 404, 'revoked already')
          return link.token
        },
        status: 410,
        errorCode: 'gone',
      },
    ]
    for (const c of cases)
      it(c.name, async (ctx) => {
        const w = await linkWorld(ctx)
        const link = await makeLink(w)
        const token = await c.spoil(w, link)
        const before = await rolesOn(w.t, w.vars.closed as string)
        for (const res of [await preview(w, token), await accept(w, 'stranger', token)]) {
          assert.equal(res.statusCode, c.status, res.body)
          assert.equal(res.json().errorCode, c.errorCode)
        }
        assert.deepEqual(await rolesOn(w.t, w.vars.closed as string), before, 'no role given')
        assert.equal((await read(w, 'stranger', w.vars.closed as string)).statusCode, 404)
      })
  })

  it('a link bound to an e-mail address works only for the user with it (case-insensitive)', async (ctx) => {
    const w = await linkWorld(ctx)
    const link = await makeLink(w, { role: 'subscriber', email: 'alice@EXAMPLE.com' })
    const other = await accept(w, 'stranger', link.token)
    assert.equal(other.statusCode, 403)
    assert.equal(other.json().errorCode, 'forbidden')
    assert.equal((await read(w, 'stranger', w.vars.closed as string)).statusCode, 404)
    const alice = await accept(w, 'alice', link.token)
    assert.equal(alice.statusCode, 200, alice.body)
    assert.equal(alice.json().role, 'subscriber')
  })

  it('uses run out: a link of 2 uses serves two people, the third gets 410', async (ctx) => {
    const w = await linkWorld(ctx)
    const link = await makeLink(w, { role: 'subscriber', maxUses: 2 })
    assert.equal((await accept(w, 'stranger', link.token)).statusCode, 200)
    assert.equal((await accept(w, 'alice', link.token)).statusCode, 200)
    const third = await accept(w, 'subscriber', link.token)
    assert.equal(third.statusCode, 410)
    const list = await w.t.request(
      who(w, 'owner'),
      'GET',
      `/v1/status/${w.vars.closed}/invitations`,
    )
    assert.deepEqual([list.json()[0].usesLeft, list.json()[0].state], [0, 'usedUp'])
  })

  it('revoking a link keeps the roles given through it', async (ctx) => {
    const w = await linkWorld(ctx)
    const link = await makeLink(w, { role: 'subscriber', maxUses: 2 })
    assert.equal((await accept(w, 'stranger', link.token)).statusCode, 200)
    await w.t.request(
      who(w, 'owner'),
      'DELETE',
      `/v1/status/${w.vars.closed}/invitations/${link.id}`,
    )
    assert.equal((await read(w, 'stranger', w.vars.closed as string)).statusCode, 200)
  })

  it('concurrent accepts of a one-use link over a real socket: exactly one gets the role', async (ctx) => {
    const w = await linkWorld(ctx)
    const everyone = await Promise.all(
      Array.from({ length: 8 }, (_, i) => w.t.user({ name: `Racer ${i}` })),
    )
    const people = [...everyone]
    await w.t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = w.t.app.server.address() as AddressInfo
    for (let round = 0; round < 3; round++) {
      const link = await makeLink(w)
      const answers = await Promise.all(
        people.map((p) =>
          fetch(`http://127.0.0.1:${port}/v1/invitations/${link.token}/accept`, {
            method: 'POST',
            headers: { 'service-api-key': p.key },
          }).then(async (r) => ({ status: r.status, body: await r.json() })),
        ),
      )
      const codes = answers.map((a) => a.status).sort()
      const losers = Array.from({ length: people.length - 1 }, () => 410)
      assert.deepEqual(codes, [200, ...losers], `round ${round}`)
      const roles = await rolesOn(w.t, w.vars.closed as string)
      assert.equal(
        roles.filter(([id]) => everyone.some((p) => p.id === id)).length,
        round + 1,
        'one role more each round',
      )
      // the winner of this round keeps its role; the next round's link goes to someone new
      const winner = people.findIndex((_, i) => answers[i]?.status === 200)
      people.splice(winner, 1)
    }
  })
})

describe('the invitation page and the mailed link', () => {
  it('/invite/<token> shows what the link offers (escaped) and how to accept; 404 and 410 pages', async (ctx) => {
    const w = await linkWorld(ctx)
    await w.t.request(who(w, 'owner'), 'PATCH', `/v1/status/${w.vars.closed as string}`, {
      name: '<b>Room</b> & co',
    })
    const link = await makeLink(w, { role: 'updater' })
    const res = await w.t.request(null, 'GET', `/invite/${link.token}`)
    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.equal(res.headers['cache-control'], 'no-store')
    assert.equal(res.headers['referrer-policy'], 'no-referrer')
    assert.ok(res.body.includes('&lt;b&gt;Room&lt;/b&gt; &amp; co'), 'the name escaped')
    assert.ok(!res.body.includes('<b>Room'), 'no markup from the name')
    assert.ok(res.body.includes('Olivia Owner'))
    assert.match(res.body, /sign in/i)
    assert.match(res.body, /sign up/i)
    assert.equal((await preview(w, link.token)).statusCode, 200, 'opening the page accepts nothing')
    const forged = await w.t.request(null, 'GET', `/invite/sdi_${'Q'.repeat(43)}`)
    assert.equal(forged.statusCode, 404)
    assert.match(forged.body, /Invitation not found/)
    w.clock.advance(8 * DAY_MS)
    const expired = await w.t.request(null, 'GET', `/invite/${link.token}`)
    assert.equal(expired.statusCode, 410)
    assert.match(expired.body, /expired/)
  })

  it('a link made for an e-mail address is mailed there (a real SMTP server); following it grants the role', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const clock = testClock(START)
    const t = await makeApp(ctx, {
      deps: {
        clock,
        publicUrl: 'https://status.example.com',
        mailer: createMailer(smtp.url, 'statusd <statusd@example.com>'),
      },
    })
    const cast = await makeCast(t)
    const status = await createStatus(t, cast.owner, 'desk', { value: 'ON', name: 'Help desk' })
    const bob = await userWithEmail(t, 'Bob', 'bob@example.com')
    const made = await t.request(cast.owner, 'POST', `/v1/status/${status.id}/invitations`, {
      role: 'updater',
      email: 'Bob@Example.com',
    })
    assert.equal(made.statusCode, 201, made.body)
    assert.equal(made.json().mailed, true)
    const mail = await smtp.next()
    // nothing the inviter typed in the subject; the body says who invites, and to what
    assert.equal(mail.subject, 'An invitation to a status on statusd')
    assert.match(
      mail.text ?? '',
      /^Olivia Owner, a user of statusd at https:\/\/status\.example\.com, invites you to a status they named "Help desk"/,
    )
    assert.deepEqual(
      (Array.isArray(mail.to) ? mail.to : [mail.to]).flatMap((a) =>
        a?.value.map((v) => v.address?.toLowerCase()),
      ),
      ['bob@example.com'],
    )
    const url = /https:\/\/status\.example\.com\/invite\/sdi_\w+/.exec(mail.text ?? '')?.[0]
    assert.equal(url, made.json().url, 'the mail carries the link')
    const token = (url as string).split('/invite/')[1] as string
    // followed: the page, then the accept as Bob (the address the link is bound to)
    const page = await t.request(null, 'GET', new URL(url as string).pathname)
    assert.equal(page.statusCode, 200)
    assert.ok(page.body.includes('Help desk'))
    const accepted = await t.request(bob, 'POST', `/v1/invitations/${token}/accept`)
    assert.equal(accepted.statusCode, 200, accepted.body)
    assert.equal(accepted.json().role, 'updater')
    const patch = await t.request(bob, 'PATCH', `/v1/status/${status.id}`, { value: 'BUSY' })
    assert.equal(patch.statusCode, 200, 'an updater now')
  })

  it('a link without an e-mail address is not mailed', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const t = await makeApp(ctx, {
      deps: { mailer: createMailer(smtp.url, 'statusd <statusd@example.com>') },
    })
    const owner = await t.user()
    const status = await createStatus(t, owner, 'desk', { value: 'ON' })
    const made = await t.request(owner, 'POST', `/v1/status/${status.id}/invitations`, {
      role: 'subscriber',
    })
    assert.equal(made.json().mailed, false)
    assert.deepEqual(smtp.messages(), [])
  })
})

describe('invitations and scoped keys (docs/accounts.md#scoped-keys)', () => {
  it('a key confined to other statuses neither sees nor answers an invitation, nor accepts a link', async (ctx) => {
    const t = await makeApp(ctx)
    const cast = await makeCast(t)
    const secret = await createStatus(t, cast.owner, 'secret', { value: 'ON', name: 'Secret' })
    const own = await createStatus(t, cast.stranger, 'mine', { value: 'ON' })
    const made = await t.request(cast.stranger, 'POST', '/v1/user/api-keys', {
      scopes: ['status:*'],
      statusIds: [own.id],
    })
    assert.equal(made.statusCode, 201, made.body)
    const confined = { id: cast.stranger.id, key: made.json().key as string }
    const offered = await t.request(
      cast.owner,
      'PUT',
      `/v1/status/${secret.id}/users/${cast.stranger.id}`,
      { role: 'subscriber' },
    )
    const id = offered.json().id as string
    assert.deepEqual((await t.request(confined, 'GET', '/v1/user/invitations')).json(), [])
    for (const answer of ['accept', 'decline']) {
      const res = await t.request(confined, 'POST', `/v1/user/invitations/${id}/${answer}`)
      assert.equal(res.statusCode, 404, `${answer}: ${res.body}`)
    }
    const link = await t.request(cast.owner, 'POST', `/v1/status/${secret.id}/invitations`, {
      role: 'subscriber',
    })
    const token = (link.json().url as string).split('/invite/')[1] as string
    assert.equal(
      (await t.request(confined, 'POST', `/v1/invitations/${token}/accept`)).statusCode,
      404,
    )
    assert.deepEqual(await rolesOn(t, secret.id), [], 'no role through the confined key')
    // the person's own key, not confined, still can
    const mine = await t.request(cast.stranger, 'GET', '/v1/user/invitations')
    assert.equal(mine.json().length, 1)
  })
})
