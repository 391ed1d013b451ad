import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Resolve } from '../../src/lib/outbound.ts'
import type { NotifiedStatus } from '../../src/modules/notifications/channel-types.ts'
import { retryDelayMs } from '../../src/modules/notifications/delivery-worker.ts'
import { recordOutboxEvent } from '../../src/modules/outbox/outbox.service.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import {
  type ReceivedRequest,
  startReceiver,
  type WebhookReceiver,
} from '../helpers/webhook-receiver.ts'

// docs/notifications.md#services: Gotify, Pushover, Telegram, Matrix and ntfy channels send
// what each service's HTTP API documents, to real receivers on 127.0.0.1 (allowed by
// WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8; Pushover's and Telegram's fixed hosts are pointed at
// the receiver by the app's serviceUrls, the guard judging it as any other address).

const GOTIFY_TOKEN = 'AbCdEfGh1234567'
const PUSHOVER_USER = 'uQiRzpo4DXghDmr9QzzfQu27cmVRsG'
const PUSHOVER_TOKEN = 'azGDORePK8gMaC0QOYAMyEEuzJnyUi'
const BOT_TOKEN = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw'
const MATRIX_TOKEN = 'syt_c3RhdHVzZA_ZmFrZXRva2VuZm9ydGVzdHM_0a1b2c'
const NTFY_TOKEN = 'tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2'
const SECRETS = [GOTIFY_TOKEN, PUSHOVER_USER, PUSHOVER_TOKEN, BOT_TOKEN, MATRIX_TOKEN, NTFY_TOKEN]

interface World {
  t: TestApp
  clock: TestClock
  owner: TestUser
  receiver: WebhookReceiver
}

async function world(ctx: Lifetime, answer?: Parameters<typeof startReceiver>[1]): Promise<World> {
  const receiver = await startReceiver(ctx, answer)
  const clock = testClock(Date.parse('2030-01-01T00:00:00Z'))
  const t = await makeApp(ctx, {
    deps: {
      clock,
      webhookAllowNetworks: ['127.0.0.0/8'],
      notifications: {
        autoStart: false,
        random: () => 0.999999,
        serviceUrls: {
          pushover: `${receiver.origin}/pushover`,
          telegram: `${receiver.origin}/telegram`,
        },
      },
    },
  })
  return { t, clock, owner: await t.user(), receiver }
}

/** Each service: a channel's config (to the receiver), and what its API expects of a request. */
interface Service {
  type: string
  config: (origin: string) => Record<string, unknown>
  /** The config the API shows: the given one without its credentials. */
  shown: (origin: string) => Record<string, unknown>
  method: string
  path: RegExp
  check: (request: ReceivedRequest, expected: { title: string; url: string }) => void
}

const json = (request: ReceivedRequest) => {
  assert.equal(request.headers['content-type'], 'application/json')
  return JSON.parse(request.body)
}

const SERVICES: Service[] = [
  {
    type: 'gotify',
    config: (origin) => ({ server: `${origin}/gotify/`, token: GOTIFY_TOKEN, priority: 8 }),
    shown: (origin) => ({ server: `${origin}/gotify/`, priority: 8 }),
    method: 'POST',
    path: /^\/gotify\/message$/,
    check(request, expected) {
      assert.equal(request.headers['x-gotify-key'], GOTIFY_TOKEN)
      const body = json(request)
      assert.equal(body.title, expected.title)
      assert.equal(typeof body.message, 'string')
      assert.equal(body.priority, 8)
      assert.deepEqual(body.extras, { 'client::notification': { click: { url: expected.url } } })
    },
  },
  {
    type: 'pushover',
    config: () => ({ user: PUSHOVER_USER, token: PUSHOVER_TOKEN }),
    shown: () => ({}),
    method: 'POST',
    path: /^\/pushover\/1\/messages\.json$/,
    check(request, expected) {
      const body = json(request)
      assert.equal(body.token, PUSHOVER_TOKEN)
      assert.equal(body.user, PUSHOVER_USER)
      assert.equal(body.title, expected.title)
      assert.equal(typeof body.message, 'string')
      assert.ok(body.message.length > 0 && body.message.length <= 1024)
      assert.equal(body.url, expected.url)
    },
  },
  {
    type: 'telegram',
    config: () => ({ botToken: BOT_TOKEN, chatId: '-1001234567890' }),
    shown: () => ({ chatId: '-1001234567890' }),
    method: 'POST',
    path: new RegExp(`^/telegram/bot${BOT_TOKEN}/sendMessage$`),
    check(request, expected) {
      const body = json(request)
      assert.deepEqual(Object.keys(body).sort(), ['chat_id', 'text'])
      assert.equal(body.chat_id, '-1001234567890')
      assert.ok(body.text.startsWith(`${expected.title}\n`))
      assert.ok(body.text.endsWith(`\n${expected.url}`))
    },
  },
  {
    type: 'matrix',
    config: (origin) => ({
      homeserver: origin,
      roomId: '!ops:example.org',
      accessToken: MATRIX_TOKEN,
    }),
    shown: (origin) => ({ homeserver: origin, roomId: '!ops:example.org' }),
    method: 'PUT',
    path: /^\/_matrix\/client\/v3\/rooms\/!ops%3Aexample\.org\/send\/m\.room\.message\/[^/]+$/,
    check(request, expected) {
      assert.equal(request.headers.authorization, `Bearer ${MATRIX_TOKEN}`)
      const body = json(request)
      assert.equal(body.msgtype, 'm.text')
      assert.ok(body.body.startsWith(`${expected.title}\n`))
      assert.ok(body.body.endsWith(`\n${expected.url}`))
    },
  },
  {
    type: 'ntfy',
    config: (origin) => ({ server: `${origin}/ntfy`, topic: 'ops-alerts', token: NTFY_TOKEN }),
    shown: (origin) => ({ server: `${origin}/ntfy`, topic: 'ops-alerts' }),
    method: 'POST',
    path: /^\/ntfy\/$/,
    check(request, expected) {
      assert.equal(request.headers.authorization, `Bearer ${NTFY_TOKEN}`)
      const body = json(request)
      assert.equal(body.topic, 'ops-alerts')
      assert.equal(body.title, expected.title)
      assert.equal(typeof body.message, 'string')
      assert.ok(Array.isArray(body.tags) && body.tags.length === 1)
      assert.equal(body.click, expected.url)
    },
  },
]

async function addChannel(w: World, service: Service) {
  const res = await w.t.request(w.owner, 'POST', '/v1/user/channels', {
    type: service.type,
    config: service.config(w.receiver.origin),
  })
  assert.equal(res.statusCode, 201, res.body)
  return { res, channel: res.json() as { id: string; config: unknown; secret: unknown } }
}

const notified = (status: { id: string; shareId: string; name: string }): NotifiedStatus => ({
  id: status.id,
  shareId: status.shareId,
  name: status.name,
  value: 'failing',
  previousValue: 'passing',
  colorNo: 0,
  changeCount: 2,
  url: `http://statusd.test/s/${status.shareId}`,
})

const noSecretIn = (text: string, where: string) => {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `no credential in ${where}`)
}

describe('service channels (docs/notifications.md#services)', () => {
  for (const service of SERVICES)
    it(`${service.type}: a test and a status change arrive as its API documents; its credentials are never shown`, async (ctx) => {
      const w = await world(ctx)
      const { res, channel } = await addChannel(w, service)
      assert.deepEqual(channel.config, service.shown(w.receiver.origin))
      assert.equal(channel.secret, null, 'a credential the user gave is not echoed')
      noSecretIn(res.body, 'the creation answer')
      noSecretIn((await w.t.request(w.owner, 'GET', '/v1/user/channels')).body, 'the list')
      noSecretIn(
        (await w.t.request(w.owner, 'GET', `/v1/user/channels/${channel.id}`)).body,
        'the channel',
      )

      const test = await w.t.request(w.owner, 'POST', `/v1/user/channels/${channel.id}/test`)
      assert.equal(test.statusCode, 202, test.body)
      // a status change, to the channel by a rule (docs/notifications.md#rules)
      const made = await w.t.request(w.owner, 'POST', '/v1/status-keys/build', {
        name: 'Build',
        accessType: 'private',
      })
      const status = made.json()
      const at = new Date(w.clock.now()).toISOString()
      await w.t.database.db
        .insertInto('notification_rules')
        .values({
          status_id: status.id,
          user_id: w.owner.id,
          condition: JSON.stringify('any'),
          channel_ids: JSON.stringify([channel.id]),
          created_at: at,
          updated_at: at,
        })
        .onConflict((oc) =>
          oc.columns(['status_id', 'user_id']).doUpdateSet({
            condition: JSON.stringify('any'),
            channel_ids: JSON.stringify([channel.id]),
          }),
        )
        .execute()
      await recordOutboxEvent(w.t.database.db, {
        type: 'status.changed',
        statusId: status.id,
        payload: { status: notified(status), at },
        at,
      })
      await w.t.app.deliveryWorker.runOnce()
      const requests = await w.receiver.received(2)
      assert.equal(requests.length, 2)
      const testRequest = requests.find((r) => !r.body.includes('Build'))
      const changeRequest = requests.find((r) => r.body.includes('Build'))
      assert.ok(testRequest && changeRequest)
      for (const request of requests) {
        assert.equal(request.method, service.method)
        assert.match(request.path, service.path)
        assert.equal(request.headers['user-agent'], 'statusd-notifications')
      }
      service.check(testRequest, {
        title: 'Test notification from statusd',
        url: 'http://localhost/notifications',
      })
      service.check(changeRequest, {
        title: 'Build: failing',
        url: `http://statusd.test/s/${status.shareId}`,
      })
      const log = (
        await w.t.request(w.owner, 'GET', `/v1/user/channels/${channel.id}/deliveries`)
      ).json()
      assert.deepEqual(
        log.map((a: { statusCode: number; error: string | null }) => [a.statusCode, a.error]),
        [
          [200, null],
          [200, null],
        ],
      )
    })

  it('matrix: a retried delivery PUTs the same transaction id, so the homeserver makes it one message', async (ctx) => {
    const w = await world(ctx, (_req, res, index) => {
      res.statusCode = index === 0 ? 502 : 200
      res.end(index === 0 ? 'bad gateway' : '{"event_id":"$abc"}')
    })
    const matrix = SERVICES.find((s) => s.type === 'matrix') as Service
    const { channel } = await addChannel(w, matrix)
    const other = await addChannel(w, matrix)
    await w.t.request(w.owner, 'POST', `/v1/user/channels/${channel.id}/test`)
    await w.t.app.deliveryWorker.runOnce()
    w.clock.advance(retryDelayMs(1, () => 0.999999))
    await w.t.app.deliveryWorker.runOnce()
    await w.t.request(w.owner, 'POST', `/v1/user/channels/${other.channel.id}/test`)
    await w.t.app.deliveryWorker.runOnce()
    const [first, retry, another] = await w.receiver.received(3)
    assert.equal(retry?.path, first?.path, 'the same transaction id on the retry')
    assert.notEqual(another?.path, first?.path, 'another delivery has its own')
    const log = (
      await w.t.request(w.owner, 'GET', `/v1/user/channels/${channel.id}/deliveries`)
    ).json()
    assert.deepEqual(
      log.map((a: { statusCode: number; error: string | null }) => [a.statusCode, a.error]),
      [
        [200, null],
        [502, 'HTTP 502'],
      ],
    )
  })

  it('a fixed-host service pointed at loopback is still judged by the outbound guard: refused without WEBHOOK_ALLOW_NETWORKS, and the log never shows the token', async (ctx) => {
    const receiver = await startReceiver(ctx)
    const clock = testClock(Date.parse('2030-01-01T00:00:00Z'))
    const t = await makeApp(ctx, {
      deps: {
        clock,
        notifications: {
          autoStart: false,
          serviceUrls: { telegram: `${receiver.origin}/telegram` },
        },
      },
    })
    const owner = await t.user()
    const made = await t.request(owner, 'POST', '/v1/user/channels', {
      type: 'telegram',
      config: { botToken: BOT_TOKEN, chatId: '@statusd_ops' },
    })
    assert.equal(made.statusCode, 201, made.body)
    const { id } = made.json()
    await t.request(owner, 'POST', `/v1/user/channels/${id}/test`)
    await t.app.deliveryWorker.runOnce()
    assert.equal(receiver.requests.length, 0, 'nothing reached loopback')
    const log = await t.request(owner, 'GET', `/v1/user/channels/${id}/deliveries`)
    assert.match(log.json()[0].error, /refused: 127\.0\.0\.1 is a loopback address/)
    noSecretIn(log.body, 'the delivery log')
  })
})

/** A resolver that knows no name: a server's name is then judged at each send, not when made. */
const noAnswer: Resolve = async (name) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' })
}

async function setup(t: Lifetime): Promise<ScenarioContext> {
  const app = await makeApp(t, {
    deps: { notifications: { autoStart: false, outbound: { resolve: noAnswer } } },
  })
  return { t: app, users: { owner: await app.user() }, vars: {} }
}

const refused = (type: string, config: Record<string, unknown>, field: string) => ({
  method: 'POST' as const,
  url: '/v1/user/channels',
  body: { type, config },
  expectStatus: 400,
  expectErrorCode: 'validationError',
  async expect(body: { errors: { field: string }[] }, ctx: ScenarioContext) {
    assert.ok(
      body.errors.some((e) => e.field === field),
      `an error at ${field}: ${JSON.stringify(body.errors)}`,
    )
    const list = await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/channels')
    assert.deepEqual(list.json(), [], 'no channel was made')
  },
})

const GOTIFY = { server: 'https://gotify.example.com', token: GOTIFY_TOKEN }
const MATRIX = { homeserver: 'https://matrix.example.org', roomId: '!a:b.org', accessToken: 'x' }

runScenarios('service channels: each type’s config is checked (docs/api.md#channels)', setup, [
  {
    name: 'gotify: a server that is not http(s) is refused at config.server',
    ...refused('gotify', { ...GOTIFY, server: 'ftp://gotify.example.com' }, 'config.server'),
  },
  {
    name: 'gotify: a server with a user name and password is refused',
    ...refused('gotify', { ...GOTIFY, server: 'https://u:p@gotify.example.com' }, 'config.server'),
  },
  {
    name: 'gotify: a server with a query is refused',
    ...refused('gotify', { ...GOTIFY, server: 'https://gotify.example.com/?a=1' }, 'config.server'),
  },
  {
    name: 'gotify: no token is refused',
    ...refused('gotify', { server: GOTIFY.server }, 'config.token'),
  },
  {
    name: 'gotify: a priority above 10 is refused',
    ...refused('gotify', { ...GOTIFY, priority: 11 }, 'config.priority'),
  },
  {
    name: 'gotify: a server on loopback is refused, naming WEBHOOK_ALLOW_NETWORKS',
    method: 'POST',
    url: '/v1/user/channels',
    body: { type: 'gotify', config: { ...GOTIFY, server: 'http://127.0.0.1:8080' } },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect(body: { errors: { field: string; message: string }[] }) {
      assert.equal(body.errors[0]?.field, 'config.server')
      assert.match(body.errors[0]?.message ?? '', /WEBHOOK_ALLOW_NETWORKS/)
    },
  },
  {
    name: 'pushover: a user key that is not 30 letters and digits is refused',
    ...refused('pushover', { user: 'short', token: PUSHOVER_TOKEN }, 'config.user'),
  },
  {
    name: 'pushover: an unknown property is refused',
    ...refused(
      'pushover',
      { user: PUSHOVER_USER, token: PUSHOVER_TOKEN, sound: 'siren' },
      'config.sound',
    ),
  },
  {
    name: 'telegram: a bot token not shaped `<id>:<secret>` is refused, saying what it must be',
    ...refused('telegram', { botToken: 'nope', chatId: '42' }, 'config.botToken'),
    expect(body: { errors: { field: string; message: string }[] }) {
      assert.deepEqual(body.errors, [
        {
          field: 'config.botToken',
          message: 'must be the token @BotFather gave: digits, a colon, then the secret',
        },
      ])
    },
  },
  {
    name: 'telegram: a chat that is neither a number nor an @username is refused',
    ...refused('telegram', { botToken: BOT_TOKEN, chatId: 'my group' }, 'config.chatId'),
  },
  {
    name: 'matrix: a room id without its `!` and server is refused',
    ...refused('matrix', { ...MATRIX, roomId: '#ops:example.org' }, 'config.roomId'),
  },
  {
    name: 'matrix: a homeserver that does not parse is refused',
    ...refused('matrix', { ...MATRIX, homeserver: 'https://' }, 'config.homeserver'),
  },
  {
    name: 'ntfy: a topic with a slash is refused',
    ...refused('ntfy', { topic: 'a/b' }, 'config.topic'),
  },
  {
    name: 'ntfy: a topic alone publishes to ntfy.sh, and nothing is hidden',
    method: 'POST',
    url: '/v1/user/channels',
    body: { type: 'ntfy', config: { topic: 'my-topic' } },
    expectStatus: 201,
    expect(body: { name: string; config: unknown; secret: unknown }) {
      assert.equal(body.name, 'ntfy (my-topic)')
      assert.deepEqual(body.config, { topic: 'my-topic' })
      assert.equal(body.secret, null)
    },
  },
])
