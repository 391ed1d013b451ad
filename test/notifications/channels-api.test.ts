import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Resolve } from '../../src/lib/outbound.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { MAX_CHANNELS_PER_USER } from '../../src/modules/notifications/channels.service.ts'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'

// docs/api.md#channels: a user's notification channels, their rules as endpoint scenarios.

const HOOK = {
  type: 'webhook',
  config: { url: 'https://hooks.example.com/in', format: 'standard' },
}

/** A resolver that knows no name: a URL's name is then judged at each send, not when made. */
const noAnswer: Resolve = async (name) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' })
}

async function setup(t: Lifetime): Promise<ScenarioContext> {
  const app = await makeApp(t, {
    deps: { notifications: { autoStart: false, outbound: { resolve: noAnswer } } },
  })
  const owner = await app.user()
  const other = await app.user()
  const statusOnly = await createApiKey(app.database.db, owner.id, { scopes: ['status:read'] })
  const made = await app.request(owner, 'POST', '/v1/user/channels', {
    type: 'webhook',
    name: 'Mine',
    config: { url: 'https://hooks.example.com/mine', format: 'slack' },
  })
  assert.equal(made.statusCode, 201, made.body)
  return {
    t: app,
    users: { owner, other, statusOnly: { id: owner.id, key: statusOnly.key } },
    vars: { channelId: made.json().id },
  }
}

const webhook = (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'webhook',
  config,
  ...extra,
})

runScenarios('channels (docs/api.md#channels)', setup, [
  {
    name: 'a standard webhook is made with its signing secret, shown once',
    method: 'POST',
    url: '/v1/user/channels',
    body: HOOK,
    expectStatus: 201,
    async expect(body, ctx, res) {
      assert.match(body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
      assert.equal(res.headers.location, `/v1/user/channels/${body.id}`)
      assert.equal(body.enabled, true)
      assert.equal(body.verified, true)
      assert.equal(body.name, 'hooks.example.com (standard)', 'named after its host by default')
      assert.deepEqual(body.config, HOOK.config)
      const list = await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/channels')
      assert.equal(list.statusCode, 200)
      assert.ok(!list.body.includes(body.secret), 'the secret is never listed')
      assert.ok(list.json().every((c: object) => !('secret' in c)))
      const one = await ctx.t.request(
        ctx.users.owner ?? null,
        'GET',
        `/v1/user/channels/${body.id}`,
      )
      assert.ok(!one.body.includes(body.secret), 'nor shown alone')
    },
  },
  ...(['slack', 'discord', 'ntfy'] as const).map((format) => ({
    name: `a ${format} webhook has no secret`,
    method: 'POST' as const,
    url: '/v1/user/channels',
    body: webhook({ url: 'https://example.com/topic', format }, { name: format }),
    expectStatus: 201,
    expect(body: { secret: unknown; name: string }) {
      assert.equal(body.secret, null)
      assert.equal(body.name, format)
    },
  })),
  {
    name: 'a type the service does not offer is refused',
    method: 'POST',
    url: '/v1/user/channels',
    body: { type: 'carrier-pigeon', config: {} },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'a URL other than http(s) is refused',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'ftp://example.com/x', format: 'standard' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'a URL that does not parse is refused',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'http://', format: 'standard' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect(body) {
      assert.equal(body.errors[0].field, 'config.url')
    },
  },
  {
    name: 'a URL with a user name and password is refused',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'https://u:p@example.com/x', format: 'standard' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'a URL of 2 048 characters is taken, one longer is refused',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: `https://example.com/${'a'.repeat(2049 - 20)}`, format: 'slack' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    async expect(_body, ctx) {
      const ok = await ctx.t.request(ctx.users.owner ?? null, 'POST', '/v1/user/channels', {
        type: 'webhook',
        config: { url: `https://example.com/${'a'.repeat(2048 - 20)}`, format: 'slack' },
      })
      assert.equal(ok.statusCode, 201, ok.body)
    },
  },
  {
    name: 'an unknown format is refused',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'https://example.com/x', format: 'teams' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'an unknown property is refused',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'https://example.com/x', format: 'slack' }, { secret: 'whsec_mine' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'a name with a control character is refused',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'https://example.com/x', format: 'slack' }, { name: 'a\u0007b' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: `at most ${MAX_CHANNELS_PER_USER} channels per user (409), and nothing is made past it`,
    method: 'GET',
    url: '/v1/user/channels',
    expectStatus: 200,
    async expect(_body, ctx) {
      const owner = ctx.users.owner ?? null
      for (let i = 1; i < MAX_CHANNELS_PER_USER; i++) {
        const res = await ctx.t.request(owner, 'POST', '/v1/user/channels', HOOK)
        assert.equal(res.statusCode, 201, res.body)
      }
      const over = await ctx.t.request(owner, 'POST', '/v1/user/channels', HOOK)
      assert.equal(over.statusCode, 409)
      assert.equal(over.json().errorCode, 'conflict')
      const list = await ctx.t.request(owner, 'GET', '/v1/user/channels')
      assert.equal(list.json().length, MAX_CHANNELS_PER_USER)
    },
  },
  {
    name: 'a channel is renamed',
    method: 'PATCH',
    url: '/v1/user/channels/{channelId}',
    body: { name: 'Renamed' },
    expectStatus: 200,
    expect(body) {
      assert.equal(body.name, 'Renamed')
    },
  },
  {
    name: 'a PATCH with nothing to change is refused',
    method: 'PATCH',
    url: '/v1/user/channels/{channelId}',
    body: {},
    expectStatus: 400,
    expectErrorCode: 'emptyBody',
  },
  {
    name: 'an enabled channel has no reason and no failing streak',
    method: 'PATCH',
    url: '/v1/user/channels/{channelId}',
    body: { enabled: true },
    expectStatus: 200,
    expect(body) {
      assert.equal(body.enabled, true)
      assert.equal(body.disabledReason, null)
      assert.equal(body.failingSince, null)
    },
  },
  {
    name: 'another user’s channel is 404 to PATCH',
    as: 'other',
    method: 'PATCH',
    url: '/v1/user/channels/{channelId}',
    body: { enabled: false },
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'another user’s channel is 404 to GET, DELETE, test and its log',
    as: 'other',
    method: 'DELETE',
    url: '/v1/user/channels/{channelId}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    async expect(_body, ctx) {
      const other = ctx.users.other ?? null
      const id = ctx.vars.channelId
      for (const [method, url] of [
        ['GET', `/v1/user/channels/${id}`],
        ['POST', `/v1/user/channels/${id}/test`],
        ['GET', `/v1/user/channels/${id}/deliveries`],
      ] as const)
        assert.equal((await ctx.t.request(other, method, url)).statusCode, 404, `${method} ${url}`)
      const mine = await ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/user/channels/${id}`)
      assert.equal(mine.statusCode, 200, 'still there')
    },
  },
  {
    name: 'a channel is deleted',
    method: 'DELETE',
    url: '/v1/user/channels/{channelId}',
    expectStatus: 204,
    async expect(_body, ctx) {
      const res = await ctx.t.request(
        ctx.users.owner ?? null,
        'GET',
        `/v1/user/channels/${ctx.vars.channelId}`,
      )
      assert.equal(res.statusCode, 404)
    },
  },
  {
    name: 'a test records a channel.test event for that channel and answers 202 with its id',
    method: 'POST',
    url: '/v1/user/channels/{channelId}/test',
    expectStatus: 202,
    async expect(body, ctx) {
      assert.match(body.eventId, /^evt_/)
      const row = await ctx.t.database.db
        .selectFrom('outbox_events')
        .selectAll()
        .where('id', '=', body.eventId)
        .executeTakeFirstOrThrow()
      assert.equal(row.type, 'channel.test')
      assert.equal(row.channel_id, ctx.vars.channelId)
      assert.equal(row.user_id, ctx.users.owner?.id)
    },
  },
  {
    name: 'the delivery log of a new channel is empty',
    method: 'GET',
    url: '/v1/user/channels/{channelId}/deliveries',
    expectStatus: 200,
    expect(body) {
      assert.deepEqual(body, [])
    },
  },
  {
    name: 'an API key needs the account scope',
    as: 'statusOnly',
    method: 'GET',
    url: '/v1/user/channels',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'no credential: 401',
    as: null,
    method: 'POST',
    url: '/v1/user/channels',
    body: HOOK,
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
])

/**
 * An app whose DNS the test answers: `lan.example` is on a private network, `public.example`
 * on the internet, `moved.example` was public when its channel was made and is loopback now
 * (its channel: `movedId`); any other name does not resolve.
 */
async function guarded(t: Lifetime): Promise<ScenarioContext> {
  const answers: Record<string, string[]> = {
    'lan.example': ['192.168.1.20'],
    'public.example': ['93.184.216.34'],
    'moved.example': ['93.184.216.34'],
  }
  const resolve: Resolve = async (name) => answers[name] ?? noAnswer(name)
  const app = await makeApp(t, {
    deps: { notifications: { autoStart: false, outbound: { resolve } } },
  })
  const owner = await app.user()
  const moved = await app.request(owner, 'POST', '/v1/user/channels', {
    type: 'webhook',
    config: { url: 'https://moved.example/in', format: 'standard' },
  })
  assert.equal(moved.statusCode, 201, moved.body)
  answers['moved.example'] = ['127.0.0.1']
  return { t: app, users: { owner }, vars: { movedId: moved.json().id } }
}

/** The refusal of a webhook URL, as made: 400, at config.url, naming the address and the setting. */
const refusedWhenMade =
  (range: RegExp) =>
  async (body: { errors: { field: string; message: string }[] }, ctx: ScenarioContext) => {
    assert.equal(body.errors.length, 1)
    assert.equal(body.errors[0]?.field, 'config.url')
    assert.match(body.errors[0]?.message ?? '', range)
    assert.match(body.errors[0]?.message ?? '', /WEBHOOK_ALLOW_NETWORKS/)
    const list = await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/channels')
    assert.equal(list.json().length, 1, 'no channel was made')
  }

runScenarios('a webhook the outbound guard refuses is refused when made and when tested', guarded, [
  {
    name: 'a webhook to a loopback address is refused when made: 400 naming WEBHOOK_ALLOW_NETWORKS',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'http://127.0.0.1:8080/hook', format: 'standard' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: refusedWhenMade(/127\.0\.0\.1 is a loopback address/),
  },
  {
    name: 'a webhook to a LAN address is refused when made: 400',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'http://192.168.1.20/hook', format: 'slack' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: refusedWhenMade(/private address/),
  },
  {
    name: 'a webhook to a name that resolves to a LAN address is refused when made: 400 naming it',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'https://lan.example/topic', format: 'ntfy' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: refusedWhenMade(/lan\.example resolves to 192\.168\.1\.20/),
  },
  {
    name: 'a webhook to an IPv6 address carrying a loopback IPv4 one is refused when made',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'http://[::127.0.0.1]:8080/hook', format: 'standard' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: refusedWhenMade(/loopback/),
  },
  {
    name: 'a webhook to a public address is made: 201',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'https://public.example/in', format: 'standard' }),
    expectStatus: 201,
  },
  {
    name: 'a webhook to a name that does not resolve now is made (judged again at each send): 201',
    method: 'POST',
    url: '/v1/user/channels',
    body: webhook({ url: 'https://later.example/in', format: 'standard' }),
    expectStatus: 201,
  },
  {
    name: 'testing a webhook whose name now resolves to a refused address: 409 saying why, nothing sent',
    method: 'POST',
    url: '/v1/user/channels/{movedId}/test',
    expectStatus: 409,
    expectErrorCode: 'conflict',
    expect: async (body, ctx) => {
      assert.match(body.message, /moved\.example resolves to 127\.0\.0\.1 is a loopback address/)
      assert.match(body.message, /WEBHOOK_ALLOW_NETWORKS/)
      const events = await ctx.t.database.db
        .selectFrom('outbox_events')
        .select('id')
        .where('type', '=', 'channel.test')
        .execute()
      assert.deepEqual(events, [], 'no test event was recorded')
    },
  },
])

test('a webhook to loopback is made when WEBHOOK_ALLOW_NETWORKS allows it', async (t) => {
  const app = await makeApp(t, {
    deps: { webhookAllowNetworks: ['127.0.0.0/8'], notifications: { autoStart: false } },
  })
  const owner = await app.user()
  const made = await app.request(owner, 'POST', '/v1/user/channels', {
    type: 'webhook',
    config: { url: 'http://127.0.0.1:8080/hook', format: 'standard' },
  })
  assert.equal(made.statusCode, 201, made.body)
  const tested = await app.request(owner, 'POST', `/v1/user/channels/${made.json().id}/test`)
  assert.equal(tested.statusCode, 202, tested.body)
})

test('a disabled channel shows why and is enabled again by its owner', async (t) => {
  const app = await makeApp(t, { deps: { notifications: { autoStart: false } } })
  const owner = await app.user()
  const made = (await app.request(owner, 'POST', '/v1/user/channels', HOOK)).json()
  await app.database.db
    .updateTable('channels')
    .set({
      enabled: 0,
      disabled_reason: 'Deliveries failed for 24 hours',
      failing_since: made.createdAt,
    })
    .where('id', '=', made.id)
    .execute()
  const disabled = (await app.request(owner, 'GET', `/v1/user/channels/${made.id}`)).json()
  assert.equal(disabled.enabled, false)
  assert.equal(disabled.disabledReason, 'Deliveries failed for 24 hours')
  assert.equal(disabled.failingSince, made.createdAt)
  const off = await app.request(owner, 'PATCH', `/v1/user/channels/${made.id}`, { enabled: false })
  assert.equal(off.json().disabledReason, null, 'disabling it yourself says no reason')
  const on = await app.request(owner, 'PATCH', `/v1/user/channels/${made.id}`, { enabled: true })
  assert.equal(on.statusCode, 200)
  assert.deepEqual(
    [on.json().enabled, on.json().disabledReason, on.json().failingSince],
    [true, null, null],
  )
})
