import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { pruneEndedShareLinks } from '../../src/modules/statuses/share-links.service.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { defer, type Lifetime } from '../helpers/cleanup.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { startServer } from '../helpers/processes.ts'
import { runScenarios } from '../helpers/scenarios.ts'
import { createStatus, grant } from '../helpers/sharing.ts'
import { SseTestClient, waitUntil } from '../helpers/sse.ts'

// docs/accounts.md#private-share-links, docs/api.md#private-share-links: an owner's expiring,
// revocable link that shows one status, read-only, whatever its accessType.

const DAY_MS = 24 * 60 * 60 * 1000
const FORGED = `sdp_${'A'.repeat(43)}`

/** The token of a link URL (`…/l/<token>`). */
const tokenOf = (url: string): string => {
  const token = /\/l\/(sdp_[A-Za-z0-9]{43})$/.exec(url)?.[1]
  assert.ok(token, `a link URL: ${url}`)
  return token
}

interface Linked {
  t: TestApp
  clock: TestClock
  owner: TestUser
  statusId: string
  token: string
  linkId: string
}

/** An app with a test clock, an owner's private status and one link to it. */
async function linkedApp(
  ctx: Lifetime,
  status: Record<string, unknown> = {},
  deps: Parameters<typeof makeApp>[1] = {},
): Promise<Linked> {
  const clock = testClock()
  const t = await makeApp(ctx, { ...deps, deps: { clock, ...deps.deps } })
  const owner = await t.user({ name: 'Olivia Owner', plan: 'pro' })
  const s = await createStatus(t, owner, 'secret', {
    name: 'Private room',
    value: 'BUSY',
    description: 'Floor 3',
    ...status,
  })
  const made = await t.request(owner, 'POST', `/v1/status/${s.id}/share-links`, {})
  assert.equal(made.statusCode, 201, made.body)
  return {
    t,
    clock,
    owner,
    statusId: s.id,
    token: tokenOf(made.json().url),
    linkId: made.json().id,
  }
}

runScenarios(
  `POST, GET, DELETE /v1/status/:statusId/share-links: the owner's links [${TEST_ENGINE}]`,
  async (ctx) => {
    const clock = testClock()
    const t = await makeApp(ctx, { deps: { clock } })
    const owner = await t.user({ plan: 'free', name: 'Olivia Owner' })
    const pro = await t.user({ plan: 'pro' })
    const updater = await t.user()
    const subscriber = await t.user()
    const stranger = await t.user()
    const s = await createStatus(t, owner, 'room', { name: 'Room', value: 'FREE' })
    const publicOne = await createStatus(t, owner, 'open', { name: 'Open', accessType: 'public' })
    const prosStatus = await createStatus(t, pro, 'pro-room', { name: 'Pro room' })
    await grant(t, owner, s.id, updater, 'updater')
    await grant(t, owner, s.id, subscriber, 'subscriber')
    const link = (await t.request(owner, 'POST', `/v1/status/${s.id}/share-links`, {})).json()
    const now = clock.now()
    return {
      t,
      users: { owner, pro, updater, subscriber, stranger },
      vars: {
        statusId: s.id,
        publicId: publicOne.id,
        prosStatus: prosStatus.id,
        linkId: link.id,
        in7days: new Date(now + 7 * DAY_MS - 60_000).toISOString(),
        in8days: new Date(now + 8 * DAY_MS).toISOString(),
        in29days: new Date(now + 29 * DAY_MS).toISOString(),
        in31days: new Date(now + 31 * DAY_MS).toISOString(),
        past: new Date(now - 60_000).toISOString(),
        created: link.createdAt,
      },
    }
  },
  [
    {
      name: 'the owner makes a link: 201 {id, url, expiresAt, createdAt}; the URL carries an sdp_ token',
      method: 'POST',
      url: '/v1/status/{statusId}/share-links',
      body: {},
      expectStatus: 201,
      expect: (body) => {
        assert.deepEqual(Object.keys(body).sort(), ['createdAt', 'expiresAt', 'id', 'url'])
        tokenOf(body.url)
      },
    },
    {
      name: "without expiresAt the link lasts the plan's shareLinkDays (free: 7 days)",
      method: 'POST',
      url: '/v1/status/{statusId}/share-links',
      expectStatus: 201,
      expect: (body) =>
        assert.equal(
          Date.parse(body.expiresAt) - Date.parse(body.createdAt) <= 7 * DAY_MS + 1000,
          true,
        ),
    },
    {
      name: 'an expiresAt within the plan: kept',
      method: 'POST',
      url: '/v1/status/{statusId}/share-links',
      body: '{"expiresAt": "{in7days}"}',
      expectStatus: 201,
      expect: (body, ctx) => assert.equal(body.expiresAt, ctx.vars.in7days),
    },
    {
      name: "an expiresAt past the plan's shareLinkDays: 400 validationError naming the limit",
      method: 'POST',
      url: '/v1/status/{statusId}/share-links',
      body: '{"expiresAt": "{in8days}"}',
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: (body) => {
        assert.equal(body.errors[0].field, 'expiresAt')
        assert.match(body.errors[0].message, /7 days/)
        assert.match(body.errors[0].message, /shareLinkDays/)
      },
    },
    {
      name: 'pro: 29 days is fine',
      as: 'pro',
      method: 'POST',
      url: '/v1/status/{prosStatus}/share-links',
      body: '{"expiresAt": "{in29days}"}',
      expectStatus: 201,
    },
    {
      name: 'pro: 31 days is past its 30',
      as: 'pro',
      method: 'POST',
      url: '/v1/status/{prosStatus}/share-links',
      body: '{"expiresAt": "{in31days}"}',
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: (body) => assert.match(body.errors[0].message, /30 days/),
    },
    {
      name: 'an expiresAt in the past: 400',
      method: 'POST',
      url: '/v1/status/{statusId}/share-links',
      body: '{"expiresAt": "{past}"}',
      expectStatus: 400,
      expectErrorCode: 'validationError',
    },
    {
      name: 'an expiresAt that is no date: 400',
      method: 'POST',
      url: '/v1/status/{statusId}/share-links',
      body: { expiresAt: 'next week' },
      expectStatus: 400,
      expectErrorCode: 'validationError',
    },
    {
      name: 'an unknown property: 400',
      method: 'POST',
      url: '/v1/status/{statusId}/share-links',
      body: { expiresAt: undefined, role: 'updater' },
      expectStatus: 400,
      expectErrorCode: 'validationError',
    },
    {
      name: 'an updater may not make links: 403',
      as: 'updater',
      method: 'POST',
      url: '/v1/status/{statusId}/share-links',
      body: {},
      expectStatus: 403,
      expectErrorCode: 'forbidden',
    },
    {
      name: 'a subscriber may not list links: 403',
      as: 'subscriber',
      method: 'GET',
      url: '/v1/status/{statusId}/share-links',
      expectStatus: 403,
      expectErrorCode: 'forbidden',
    },
    {
      name: "a stranger: 404 (a private status's existence does not leak)",
      as: 'stranger',
      method: 'POST',
      url: '/v1/status/{statusId}/share-links',
      body: {},
      expectStatus: 404,
      expectErrorCode: 'notFound',
    },
    {
      name: "a stranger and a public status's links: 403",
      as: 'stranger',
      method: 'GET',
      url: '/v1/status/{publicId}/share-links',
      expectStatus: 403,
      expectErrorCode: 'forbidden',
    },
    {
      name: 'without a key: 401',
      as: null,
      method: 'POST',
      url: '/v1/status/{statusId}/share-links',
      body: {},
      expectStatus: 401,
    },
    {
      name: 'the owner lists the links, never a token',
      method: 'GET',
      url: '/v1/status/{statusId}/share-links',
      expectStatus: 200,
      expect: (body, ctx) => {
        assert.equal(body.length, 1)
        assert.deepEqual(body[0], {
          id: ctx.vars.linkId,
          createdAt: ctx.vars.created,
          expiresAt: body[0].expiresAt,
          revokedAt: null,
          active: true,
        })
      },
    },
    {
      name: 'the owner revokes a link: 204, then listed as ended',
      method: 'DELETE',
      url: '/v1/status/{statusId}/share-links/{linkId}',
      expectStatus: 204,
      expect: async (_body, ctx) => {
        const list = await ctx.t.request(
          ctx.users.owner ?? null,
          'GET',
          `/v1/status/${ctx.vars.statusId}/share-links`,
        )
        const [link] = list.json()
        assert.equal(link.active, false)
        assert.equal(typeof link.revokedAt, 'string')
      },
    },
    {
      name: 'an unknown link id: 404',
      method: 'DELETE',
      url: '/v1/status/{statusId}/share-links/nope',
      expectStatus: 404,
      expectErrorCode: 'notFound',
    },
    {
      name: "a link of the status, through another status's URL: 404",
      as: 'pro',
      method: 'DELETE',
      url: '/v1/status/{prosStatus}/share-links/{linkId}',
      expectStatus: 404,
      expectErrorCode: 'notFound',
    },
    {
      name: 'an updater may not revoke: 403, and the link still works',
      as: 'updater',
      method: 'DELETE',
      url: '/v1/status/{statusId}/share-links/{linkId}',
      expectStatus: 403,
      expectErrorCode: 'forbidden',
    },
  ],
)

describe(`whoever holds a link sees the status, read-only [${TEST_ENGINE}]`, () => {
  it('a private status: JSON view, page, badge; history and user list as for an anonymous viewer of a public status', async (ctx) => {
    const { t, token } = await linkedApp(ctx, { accessTypeHistory: 'public' })
    const view = await t.request(null, 'GET', `/v1/share-links/${token}`)
    assert.equal(view.statusCode, 200, view.body)
    assert.equal(view.json().name, 'Private room')
    assert.equal(view.json().value, 'BUSY')
    assert.equal(view.json().id, undefined, 'the share view: no status id')
    assert.equal(view.json().statusKey, undefined)

    const history = await t.request(null, 'GET', `/v1/share-links/${token}/history`)
    assert.equal(history.statusCode, 200, history.body)
    assert.deepEqual(
      history.json().map((e: { value: string }) => e.value),
      ['BUSY'],
    )
    // the user list is the owner's (its default): as for any anonymous viewer, 403
    const users = await t.request(null, 'GET', `/v1/share-links/${token}/users`)
    assert.equal(users.statusCode, 403)

    const page = await t.request(null, 'GET', `/l/${token}`)
    assert.equal(page.statusCode, 200)
    assert.match(String(page.headers['content-type']), /text\/html/)
    assert.match(page.body, /Private room/)
    assert.match(page.body, /BUSY/)
    assert.match(page.body, /History/)
    assert.doesNotMatch(page.body, /People/)
    assert.ok(page.body.includes(`data-events="/v1/share-links/${token}/events"`))

    const badge = await t.request(null, 'GET', `/l/${token}/badge.svg`)
    assert.equal(badge.statusCode, 200)
    assert.match(String(badge.headers['content-type']), /image\/svg\+xml/)
    assert.match(badge.body, /BUSY/)

    // the share id itself still shows nothing: the status stays private
    const shareId = (await t.request(null, 'GET', `/v1/share-links/${token}`)).json().shareId
    assert.equal((await t.request(null, 'GET', `/v1/share/${shareId}`)).statusCode, 404)
  })

  it('history hidden from anonymous viewers (private, the default) stays hidden through a link: 403, left off the page', async (ctx) => {
    const { t, token } = await linkedApp(ctx)
    assert.equal((await t.request(null, 'GET', `/v1/share-links/${token}/history`)).statusCode, 403)
    assert.doesNotMatch((await t.request(null, 'GET', `/l/${token}`)).body, /History/)
  })

  it('read-only: a holder without a role cannot change the status (403 on PATCH), and no route writes with a token', async (ctx) => {
    const { t, token, statusId } = await linkedApp(ctx)
    const holder = await t.user()
    // they know the status now; the link gives no role
    const patch = await t.request(holder, 'PATCH', `/v1/status/${statusId}`, { value: 'HACKED' })
    assert.equal(patch.statusCode, 404, 'a private status without a role: not found')
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.request(null, method, `/v1/share-links/${token}`, { value: 'HACKED' })
      assert.equal(res.statusCode, 404, `${method}: ${res.body}`)
    }
    const view = await t.request(null, 'GET', `/v1/share-links/${token}`)
    assert.equal(view.json().value, 'BUSY')
  })

  it('a public status a holder follows through a link: PATCH still 403 for a subscriber', async (ctx) => {
    const { t, token, statusId } = await linkedApp(ctx, { accessType: 'public' })
    const holder = await t.user()
    assert.equal(
      (await t.request(holder, 'POST', `/v1/share-links/${token}/follow`)).statusCode,
      201,
    )
    const patch = await t.request(holder, 'PATCH', `/v1/status/${statusId}`, { value: 'HACKED' })
    assert.equal(patch.statusCode, 403)
  })

  it('responses carry Cache-Control: private, no-store and Referrer-Policy: no-referrer, errors too; the JSON views any origin', async (ctx) => {
    const { t, token } = await linkedApp(ctx, { accessTypeHistory: 'public' })
    for (const url of [
      `/v1/share-links/${token}`,
      `/v1/share-links/${token}/history`,
      `/v1/share-links/${token}/users`,
      `/l/${token}`,
      `/l/${token}/badge.svg`,
      `/v1/share-links/${FORGED}`,
      `/l/${FORGED}`,
      `/l/${FORGED}/badge.svg`,
    ]) {
      const res = await t.request(null, 'GET', url)
      assert.equal(res.headers['cache-control'], 'private, no-store', url)
      assert.equal(res.headers['referrer-policy'], 'no-referrer', url)
      assert.equal(res.headers.etag, undefined, `${url}: no ETag, nothing to revalidate`)
      // the JSON views answer any page (docs/sharing.md#embeds: the token is the credential,
      // no cookie is involved); the page and badge do not
      assert.equal(
        res.headers['access-control-allow-origin'],
        url.startsWith('/v1/') ? '*' : undefined,
        `${url}: CORS for the JSON views only`,
      )
    }
  })
})

describe(`forged, revoked, expired: the same 404 [${TEST_ENGINE}]`, () => {
  it('every view answers 404 with one message, whatever made the token fail', async (ctx) => {
    const { t, owner, statusId, token, linkId, clock } = await linkedApp(ctx)
    const revoked = tokenOf(
      (await t.request(owner, 'POST', `/v1/status/${statusId}/share-links`, {})).json().url,
    )
    const revokedId = (
      await t.request(owner, 'GET', `/v1/status/${statusId}/share-links`)
    ).json()[0].id
    assert.notEqual(revokedId, linkId)
    assert.equal(
      (await t.request(owner, 'DELETE', `/v1/status/${statusId}/share-links/${revokedId}`))
        .statusCode,
      204,
    )
    const short = tokenOf(
      (
        await t.request(owner, 'POST', `/v1/status/${statusId}/share-links`, {
          expiresAt: new Date(clock.now() + 60_000).toISOString(),
        })
      ).json().url,
    )
    assert.equal((await t.request(null, 'GET', `/v1/share-links/${short}`)).statusCode, 200)
    clock.advance(60_000)
    const bodies = new Set<string>()
    for (const bad of [FORGED, revoked, short, 'sdp_short', 'not-a-token', `${token}x`]) {
      for (const path of ['', '/history', '/users']) {
        const res = await t.request(
          null,
          'GET',
          `/v1/share-links/${encodeURIComponent(bad)}${path}`,
        )
        assert.equal(res.statusCode, 404, `${bad}${path}`)
        const { message, errorCode } = res.json()
        bodies.add(JSON.stringify({ message, errorCode }))
      }
      assert.equal((await t.request(null, 'GET', `/l/${encodeURIComponent(bad)}`)).statusCode, 404)
      assert.equal(
        (await t.request(null, 'GET', `/l/${encodeURIComponent(bad)}/badge.svg`)).statusCode,
        404,
      )
    }
    assert.equal(bodies.size, 1, `one answer for all: ${[...bodies]}`)
    // the working link still works
    assert.equal((await t.request(null, 'GET', `/v1/share-links/${token}`)).statusCode, 200)
  })

  it('expiry follows the clock: the link works until its expiresAt, then is 404, and is listed as ended', async (ctx) => {
    const { t, owner, statusId, token, clock } = await linkedApp(ctx)
    clock.advance(30 * DAY_MS - 60_000) // pro: 30 days
    assert.equal((await t.request(null, 'GET', `/v1/share-links/${token}`)).statusCode, 200)
    clock.advance(60_000)
    assert.equal((await t.request(null, 'GET', `/v1/share-links/${token}`)).statusCode, 404)
    const [link] = (await t.request(owner, 'GET', `/v1/status/${statusId}/share-links`)).json()
    assert.equal(link.active, false)
    assert.equal(link.revokedAt, null)
    // ended links leave the list after 7 days
    clock.advance(7 * DAY_MS + 1)
    assert.deepEqual(
      (await t.request(owner, 'GET', `/v1/status/${statusId}/share-links`)).json(),
      [],
    )
  })

  it('housekeeping deletes the links that left the list (ended over 7 days ago), and only those', async (ctx) => {
    const { t, owner, statusId, linkId, clock } = await linkedApp(ctx)
    const second = (await t.request(owner, 'POST', `/v1/status/${statusId}/share-links`, {})).json()
    await t.request(owner, 'DELETE', `/v1/status/${statusId}/share-links/${linkId}`)
    const count = async () =>
      (await t.database.db.selectFrom('share_links').select('id').execute()).map((r) => r.id)
    assert.equal(await pruneEndedShareLinks(t.database.db, clock.now()), 0)
    clock.advance(7 * DAY_MS + 1)
    assert.equal(await pruneEndedShareLinks(t.database.db, clock.now()), 1)
    assert.deepEqual(await count(), [second.id])
  })

  it('deleting the status ends its links: 404', async (ctx) => {
    const { t, owner, statusId, token } = await linkedApp(ctx)
    assert.equal((await t.request(owner, 'DELETE', `/v1/status/${statusId}`)).statusCode, 204)
    assert.equal((await t.request(null, 'GET', `/v1/share-links/${token}`)).statusCode, 404)
  })

  it('a status has at most 100 links that work at once: 409; a revoked one frees a place', async (ctx) => {
    const { t, owner, statusId } = await linkedApp(ctx)
    for (let i = 1; i < 100; i++)
      assert.equal(
        (await t.request(owner, 'POST', `/v1/status/${statusId}/share-links`, {})).statusCode,
        201,
      )
    const over = await t.request(owner, 'POST', `/v1/status/${statusId}/share-links`, {})
    assert.equal(over.statusCode, 409, over.body)
    const [first] = (await t.request(owner, 'GET', `/v1/status/${statusId}/share-links`)).json()
    await t.request(owner, 'DELETE', `/v1/status/${statusId}/share-links/${first.id}`)
    assert.equal(
      (await t.request(owner, 'POST', `/v1/status/${statusId}/share-links`, {})).statusCode,
      201,
    )
  })
})

describe(`following through a link [${TEST_ENGINE}]`, () => {
  it('a signed-in holder follows: subscriber at once, answered with the status; kept after the link is revoked', async (ctx) => {
    const { t, owner, statusId, token, linkId } = await linkedApp(ctx)
    const holder = await t.user()
    const res = await t.request(holder, 'POST', `/v1/share-links/${token}/follow`)
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().id, statusId)
    assert.equal(res.json().statusKey, null)
    assert.equal((await t.request(holder, 'GET', `/v1/status/${statusId}`)).statusCode, 200)
    const again = await t.request(holder, 'POST', `/v1/share-links/${token}/follow`)
    assert.equal(again.statusCode, 200, 'a role held already: 200, kept as it is')
    await t.request(owner, 'DELETE', `/v1/status/${statusId}/share-links/${linkId}`)
    assert.equal(
      (await t.request(holder, 'POST', `/v1/share-links/${token}/follow`)).statusCode,
      404,
    )
    const read = await t.request(holder, 'GET', `/v1/status/${statusId}`)
    assert.equal(read.statusCode, 200, 'the role stays when the link ends')
    const subs = (await t.request(holder, 'GET', '/v1/user/subscriptions')).json()
    assert.deepEqual(
      subs.map((s: { statusId: string; role: string }) => [s.statusId, s.role]),
      [[statusId, 'subscriber']],
    )
  })

  it('an updater following keeps updater', async (ctx) => {
    const { t, owner, statusId, token } = await linkedApp(ctx)
    const updater = await t.user()
    await grant(t, owner, statusId, updater, 'updater')
    assert.equal(
      (await t.request(updater, 'POST', `/v1/share-links/${token}/follow`)).statusCode,
      200,
    )
    const users = (await t.request(owner, 'GET', `/v1/status/${statusId}/users`)).json()
    assert.equal(users.find((u: { userId: string }) => u.userId === updater.id).role, 'updater')
  })

  it('the owner following their own status: 409 conflict; without a key: 401; unverified: 403', async (ctx) => {
    const { t, owner, token } = await linkedApp(ctx)
    const own = await t.request(owner, 'POST', `/v1/share-links/${token}/follow`)
    assert.equal(own.statusCode, 409)
    assert.equal(own.json().errorCode, 'conflict')
    assert.equal((await t.request(null, 'POST', `/v1/share-links/${token}/follow`)).statusCode, 401)
    const unverified = await t.user({ verified: false })
    const refused = await t.request(unverified, 'POST', `/v1/share-links/${token}/follow`)
    assert.equal(refused.statusCode, 403)
    assert.equal(refused.json().errorCode, 'notVerified')
  })

  it('a key confined to other statuses (a device key) cannot follow: 404, as for a forged link', async (ctx) => {
    const { t, token, statusId } = await linkedApp(ctx)
    const holder = await t.user()
    const own = await createStatus(t, holder, 'mine', { name: 'Mine' })
    const made = await t.request(holder, 'POST', '/v1/user/api-keys', { statusIds: [own.id] })
    assert.equal(made.statusCode, 201, made.body)
    const device = { id: holder.id, key: made.json().key as string }
    assert.equal(
      (await t.request(device, 'POST', `/v1/share-links/${token}/follow`)).statusCode,
      404,
    )
    assert.equal((await t.request(holder, 'GET', `/v1/status/${statusId}`)).statusCode, 404)
  })

  it('a key without status:read cannot follow: 403 insufficientScope', async (ctx) => {
    const { t, token } = await linkedApp(ctx)
    const holder = await t.user()
    const made = await t.request(holder, 'POST', '/v1/user/api-keys', { scopes: ['status:value'] })
    assert.equal(made.statusCode, 201, made.body)
    const narrow = { id: holder.id, key: made.json().key as string }
    const res = await t.request(narrow, 'POST', `/v1/share-links/${token}/follow`)
    assert.equal(res.statusCode, 403)
    assert.equal(res.json().errorCode, 'insufficientScope')
  })

  it('a forged token: 404, and no role is granted', async (ctx) => {
    const { t, statusId } = await linkedApp(ctx)
    const holder = await t.user()
    assert.equal(
      (await t.request(holder, 'POST', `/v1/share-links/${FORGED}/follow`)).statusCode,
      404,
    )
    assert.equal((await t.request(holder, 'GET', `/v1/status/${statusId}`)).statusCode, 404)
  })
})

/** A linked app listening on 127.0.0.1, for real event streams. */
async function liveLinked(ctx: Lifetime, status: Record<string, unknown> = {}) {
  const linked = await linkedApp(ctx, status, {
    deps: { sse: { heartbeatMs: 50 } },
  })
  await linked.t.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(linked.t.app.server.address() as AddressInfo).port}`
  return { ...linked, base }
}

async function assertLinkEnded(stream: SseTestClient): Promise<void> {
  const end = await stream.nextEvent()
  assert.equal(end.event, 'unavailable')
  assert.deepEqual(JSON.parse(end.data), { reason: 'linkEnded' })
  await stream.ended
}

describe(`a link's live stream [${TEST_ENGINE}]`, () => {
  it('streams a private status: the current state, then each change, with the link headers', async (ctx) => {
    const live = await liveLinked(ctx)
    const stream = await SseTestClient.connect(`${live.base}/v1/share-links/${live.token}/events`)
    ctx.after(() => stream.close())
    assert.equal(stream.status, 200)
    assert.equal(stream.response.headers['cache-control'], 'private, no-store, no-transform')
    assert.equal(stream.response.headers['referrer-policy'], 'no-referrer')
    const first = await stream.nextEvent()
    assert.equal(first.event, 'status')
    assert.equal(JSON.parse(first.data).value, 'BUSY')
    await live.t.request(live.owner, 'PATCH', `/v1/status/${live.statusId}`, { value: 'FREE' })
    const next = await stream.nextEvent()
    assert.equal(JSON.parse(next.data).value, 'FREE')
    assert.equal(JSON.parse(next.data).id, undefined, 'the share view')
  })

  it('a forged token: 404 JSON, no stream', async (ctx) => {
    const live = await liveLinked(ctx)
    const stream = await SseTestClient.connect(`${live.base}/v1/share-links/${FORGED}/events`)
    assert.equal(stream.status, 404)
    assert.equal(stream.response.headers['cache-control'], 'private, no-store')
    assert.equal(JSON.parse(await stream.text()).errorCode, 'notFound')
  })

  it('revoking the link ends the streams opened through it at once; other links and the owner keep theirs', async (ctx) => {
    const live = await liveLinked(ctx)
    const other = tokenOf(
      (
        await live.t.request(live.owner, 'POST', `/v1/status/${live.statusId}/share-links`, {})
      ).json().url,
    )
    const doomed = await SseTestClient.connect(`${live.base}/v1/share-links/${live.token}/events`)
    const kept = await SseTestClient.connect(`${live.base}/v1/share-links/${other}/events`)
    const owners = await SseTestClient.connect(`${live.base}/v1/status/${live.statusId}/events`, {
      'service-api-key': live.owner.key,
    })
    ctx.after(() => {
      kept.close()
      owners.close()
    })
    for (const s of [doomed, kept, owners]) assert.equal((await s.nextEvent()).event, 'status')
    const revoke = await live.t.request(
      live.owner,
      'DELETE',
      `/v1/status/${live.statusId}/share-links/${live.linkId}`,
    )
    assert.equal(revoke.statusCode, 204)
    await assertLinkEnded(doomed)
    await live.t.request(live.owner, 'PATCH', `/v1/status/${live.statusId}`, { value: 'AFTER' })
    assert.equal(JSON.parse((await kept.nextEvent()).data).value, 'AFTER')
    assert.equal(JSON.parse((await owners.nextEvent()).data).value, 'AFTER')
  })

  it("an expired link's stream ends within the check interval, by the clock", async (ctx) => {
    const live = await liveLinked(ctx)
    const stream = await SseTestClient.connect(`${live.base}/v1/share-links/${live.token}/events`)
    assert.equal((await stream.nextEvent()).event, 'status')
    live.clock.advance(30 * DAY_MS)
    await assertLinkEnded(stream)
  })

  it('deleting the status ends the stream (deleted)', async (ctx) => {
    const live = await liveLinked(ctx)
    const stream = await SseTestClient.connect(`${live.base}/v1/share-links/${live.token}/events`)
    assert.equal((await stream.nextEvent()).event, 'status')
    await live.t.request(live.owner, 'DELETE', `/v1/status/${live.statusId}`)
    const end = await stream.nextEvent()
    assert.equal(end.event, 'unavailable')
    assert.deepEqual(JSON.parse(end.data), { reason: 'deleted' })
    await stream.ended
  })

  it('a private status made public and back: the link stream goes on (the link, not the accessType, decides)', async (ctx) => {
    const live = await liveLinked(ctx)
    const stream = await SseTestClient.connect(`${live.base}/v1/share-links/${live.token}/events`)
    ctx.after(() => stream.close())
    assert.equal((await stream.nextEvent()).event, 'status')
    await live.t.request(live.owner, 'PATCH', `/v1/status/${live.statusId}`, {
      accessType: 'public',
    })
    await live.t.request(live.owner, 'PATCH', `/v1/status/${live.statusId}`, {
      accessType: 'private',
    })
    await live.t.request(live.owner, 'PATCH', `/v1/status/${live.statusId}`, { value: 'STILL' })
    await waitUntil(
      () =>
        stream
          .pendingEvents()
          .some((e) => e.event === 'status' && JSON.parse(e.data).value === 'STILL'),
      'the stream gets the last value',
    )
    assert.ok(stream.pendingEvents().every((e) => e.event === 'status'))
  })
})

describe('a token in a request URL is logged masked', () => {
  it('the request log line names sdp_[redacted], never the token', async (ctx) => {
    const dir = mkdtempSync(join(tmpdir(), 'statusd-link-logs-'))
    defer(ctx, () => rmSync(dir, { recursive: true, force: true }))
    const server = await startServer(ctx, join(dir, 'statusd.db'))
    const key = await server.waitForFirstKey()
    const headers = { 'service-api-key': key, 'content-type': 'application/json' }
    const created = await fetch(`${server.url}/v1/status-keys/room`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ value: 'ON' }),
    })
    const statusId = ((await created.json()) as { id: string }).id
    const made = await fetch(`${server.url}/v1/status/${statusId}/share-links`, {
      method: 'POST',
      headers,
      body: '{}',
    })
    const token = tokenOf(((await made.json()) as { url: string }).url)
    for (const path of [`/l/${token}`, `/v1/share-links/${token}`, `/l/${token}/badge.svg`])
      assert.equal((await fetch(`${server.url}${path}`)).status, 200, path)
    await waitUntil(
      () => server.logs().filter((l) => JSON.stringify(l).includes('sdp_[redacted]')).length >= 3,
      'the three requests are logged',
    )
    const all = [...server.stdout, ...server.stderr].join('\n')
    assert.ok(!all.includes(token), 'the token appears nowhere in the output')
    assert.ok(!all.includes(token.slice(4)), 'nor its secret part')
  })
})
