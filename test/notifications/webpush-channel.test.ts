import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { ApiError } from '../../src/lib/errors.ts'
import { newId } from '../../src/lib/ids.ts'
import type {
  ChannelRow,
  NotificationEvent,
} from '../../src/modules/notifications/channel-types.ts'
import { DeliveryError } from '../../src/modules/notifications/channel-types.ts'
import { VapidKeys, vapidSubject } from '../../src/modules/notifications/vapid-keys.ts'
import {
  PUSH_TTL_SECONDS,
  type WebpushChannelConfig,
  webpushChannelType,
} from '../../src/modules/notifications/webpush-channel.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import {
  directPushTransport,
  makeSubscription,
  startPushService,
  type TestPushService,
  verifiedVapidClaims,
} from '../helpers/push-service.ts'

// Browser push (docs/notifications.md#browser-push): a push service endpoint on loopback
// receives what the channel sends; the test decrypts it with the subscription's private key
// and auth secret as the browser would (http_ece, RFC 8291) and checks the VAPID signature
// with the key `GET /v1/webpush/key` gives.

const PUBLIC_URL = 'https://status.example.com'
const SUBJECT = 'mailto:ops@status.example.com'

interface PushWorld {
  t: TestApp
  push: TestPushService
  type: ReturnType<typeof webpushChannelType>
  publicKey: string
}

async function pushWorld(ctx: TestContext): Promise<PushWorld> {
  const t = await makeApp(ctx)
  const push = await startPushService(ctx)
  const type = webpushChannelType({
    db: t.database.db,
    keys: new VapidKeys(t.database.db),
    subject: SUBJECT,
    transport: directPushTransport,
  })
  const user = await t.user()
  const res = await t.request(user, 'GET', '/v1/webpush/key')
  assert.equal(res.statusCode, 200)
  return { t, push, type, publicKey: res.json().publicKey }
}

async function storeChannel(t: TestApp, config: WebpushChannelConfig): Promise<ChannelRow> {
  const user = await t.user()
  const at = new Date().toISOString()
  return t.database.db
    .insertInto('channels')
    .values({
      id: newId(),
      user_id: user.id,
      type: 'webpush',
      name: 'my phone',
      config: JSON.stringify(config),
      secret: null,
      verified_at: at,
      failing_since: null,
      disabled_reason: null,
      created_at: at,
      updated_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

const changed = {
  type: 'status.changed',
  id: 'evt_0123',
  at: '2026-11-29T10:00:00.000Z',
  status: {
    id: 'st_42',
    shareId: 'sh_42',
    name: 'Meeting room 4',
    value: 'BUSY',
    previousValue: 'FREE',
    colorNo: 2,
    changeCount: 7,
    url: `${PUBLIC_URL}/s/sh_42`,
  },
} satisfies NotificationEvent

async function refusal(promise: Promise<unknown> | undefined): Promise<ApiError> {
  try {
    await promise
  } catch (err) {
    if (err instanceof ApiError) return err
    throw err
  }
  assert.fail('expected a refusal')
}

describe('browser push channel', () => {
  it('GET /v1/webpush/key: the VAPID public key (uncompressed P-256, base64url), the same on every request; no credential 401', async (ctx) => {
    const t = await makeApp(ctx)
    const user = await t.user()
    const first = await t.request(user, 'GET', '/v1/webpush/key')
    assert.equal(first.statusCode, 200)
    const { publicKey } = first.json()
    assert.match(publicKey, /^[A-Za-z0-9_-]+$/)
    const point = Buffer.from(publicKey, 'base64url')
    assert.equal(point.length, 65)
    assert.equal(point[0], 4)
    assert.deepEqual((await t.request(user, 'GET', '/v1/webpush/key')).json(), { publicKey })
    const anonymous = await t.request(null, 'GET', '/v1/webpush/key')
    assert.equal(anonymous.statusCode, 401)
  })

  it('the key pair is made once per database: instances starting together all keep the first stored', async (ctx) => {
    const t = await makeApp(ctx)
    const user = await t.user()
    const { publicKey } = (await t.request(user, 'GET', '/v1/webpush/key')).json()
    // five more instances on the same database, at the same moment
    const pairs = await Promise.all(
      Array.from({ length: 5 }, () => new VapidKeys(t.database.db).get()),
    )
    for (const pair of pairs) assert.equal(pair.publicKey, publicKey)
    assert.equal(new Set(pairs.map((p) => p.privateKey)).size, 1)
    const rows = await t.database.db.selectFrom('service_settings').selectAll().execute()
    assert.equal(rows.length, 1)
  })

  it('a change arrives encrypted for the browser (aes128gcm), signed with the VAPID key: the payload the service worker shows', async (ctx) => {
    const w = await pushWorld(ctx)
    const browser = makeSubscription(`${w.push.origin}/push/abc`)
    const channel = await storeChannel(w.t, browser)
    const result = await w.type.send(channel, browser, changed, { publicUrl: PUBLIC_URL })
    assert.deepEqual(result, { statusCode: 201 })

    const request = await w.push.next()
    assert.equal(request.path, '/push/abc')
    assert.equal(request.headers['content-encoding'], 'aes128gcm')
    assert.equal(request.headers.ttl, String(PUSH_TTL_SECONDS))
    assert.equal(request.headers.urgency, 'normal')
    const claims = verifiedVapidClaims(request.headers.authorization, w.publicKey)
    assert.equal(claims.aud, w.push.origin)
    assert.equal(claims.sub, SUBJECT)
    assert.ok(claims.exp > Date.now() / 1000, 'not expired')
    assert.ok(claims.exp <= Date.now() / 1000 + 24 * 60 * 60, 'at most 24 h ahead (RFC 8292)')

    assert.equal(request.body.includes(Buffer.from('Meeting room')), false, 'encrypted')
    const payload = JSON.parse(browser.decrypt(request.body).toString('utf8'))
    assert.deepEqual(payload, {
      type: 'status.changed',
      id: 'evt_0123',
      title: 'Meeting room 4: BUSY',
      body: 'Meeting room 4 is now “BUSY” (was “FREE”).',
      url: `${PUBLIC_URL}/s/sh_42`,
      tag: 'st_42',
    })
  })

  it('a test notice and a stale notice: tagged by type and by status', async (ctx) => {
    const w = await pushWorld(ctx)
    const browser = makeSubscription(`${w.push.origin}/push/t`)
    const channel = await storeChannel(w.t, browser)
    await w.type.send(
      channel,
      browser,
      { type: 'channel.test', id: 'evt_t', at: changed.at, message: 'A test of "my phone"' },
      { publicUrl: PUBLIC_URL },
    )
    const test = JSON.parse(browser.decrypt((await w.push.next()).body).toString())
    assert.equal(test.tag, 'channel.test')
    assert.equal(test.body, 'A test of "my phone"')
    assert.equal(test.url, `${PUBLIC_URL}/notifications`)
    await w.type.send(
      channel,
      browser,
      { ...changed, type: 'status.stale' },
      {
        publicUrl: PUBLIC_URL,
      },
    )
    const stale = JSON.parse(browser.decrypt((await w.push.next()).body).toString())
    assert.equal(stale.title, 'Meeting room 4 is stale')
    assert.equal(stale.tag, 'st_42')
  })

  for (const code of [404, 410])
    it(`a subscription the push service says is gone (${code}): no retry, and the channel is turned off saying why`, async (ctx) => {
      const w = await pushWorld(ctx)
      const browser = makeSubscription(`${w.push.origin}/push/gone`)
      const channel = await storeChannel(w.t, browser)
      w.push.answer(code)
      await assert.rejects(
        w.type.send(channel, browser, changed, { publicUrl: PUBLIC_URL }),
        (err: unknown) =>
          err instanceof DeliveryError && err.retryable === false && err.statusCode === code,
      )
      const row = await w.t.database.db
        .selectFrom('channels')
        .selectAll()
        .where('id', '=', channel.id)
        .executeTakeFirstOrThrow()
      assert.equal(row.enabled, 0)
      assert.match(row.disabled_reason ?? '', /subscription/)
    })

  it('429 and 5xx are retried; other refusals (400, 403, 413) are not; neither turns the channel off', async (ctx) => {
    const w = await pushWorld(ctx)
    const browser = makeSubscription(`${w.push.origin}/push/x`)
    const channel = await storeChannel(w.t, browser)
    for (const [code, retryable] of [
      [429, true],
      [500, true],
      [503, true],
      [400, false],
      [403, false],
      [413, false],
    ] as const) {
      w.push.answer(code)
      await assert.rejects(
        w.type.send(channel, browser, changed, { publicUrl: PUBLIC_URL }),
        (err: unknown) =>
          err instanceof DeliveryError && err.retryable === retryable && err.statusCode === code,
        String(code),
      )
    }
    const row = await w.t.database.db
      .selectFrom('channels')
      .select('enabled')
      .where('id', '=', channel.id)
      .executeTakeFirstOrThrow()
    assert.equal(row.enabled, 1)
  })

  it('a push service that cannot be reached: an error worth retrying', async (ctx) => {
    const w = await pushWorld(ctx)
    const browser = makeSubscription('http://127.0.0.1:1/push/none')
    const channel = await storeChannel(w.t, browser)
    await assert.rejects(
      w.type.send(channel, browser, changed, { publicUrl: PUBLIC_URL }),
      (err: unknown) => !(err instanceof DeliveryError) || err.retryable,
    )
  })

  it('a subscription is checked before it is stored: https (http only to an address on the local network), keys that are keys', async (ctx) => {
    const w = await pushWorld(ctx)
    const good = makeSubscription('https://fcm.googleapis.com/fcm/send/abc:def').subscription
    const user = await w.t.user()
    await w.type.beforeCreate?.({ userId: user.id, config: { subscription: good } })
    await w.type.beforeCreate?.({
      userId: user.id,
      config: { subscription: { ...good, endpoint: 'http://127.0.0.1:8080/push' } },
    })
    const cases: [string, WebpushChannelConfig['subscription'], string][] = [
      [
        'plain http to the internet',
        { ...good, endpoint: 'http://push.example.com/x' },
        'endpoint',
      ],
      ['not http at all', { ...good, endpoint: 'ftp://push.example.com/x' }, 'endpoint'],
      ['not a URL', { ...good, endpoint: 'push service' }, 'endpoint'],
      [
        'credentials in the URL',
        { ...good, endpoint: 'https://a:b@push.example.com/x' },
        'endpoint',
      ],
      [
        'p256dh too short',
        { ...good, keys: { ...good.keys, p256dh: good.keys.p256dh.slice(0, 40) } },
        'keys.p256dh',
      ],
      [
        'p256dh not a point of P-256',
        { ...good, keys: { ...good.keys, p256dh: Buffer.alloc(65, 4).toString('base64url') } },
        'keys.p256dh',
      ],
      ['auth not 16 bytes', { ...good, keys: { ...good.keys, auth: 'AAAA' } }, 'keys.auth'],
    ]
    for (const [name, subscription, field] of cases) {
      const err = await refusal(
        w.type.beforeCreate?.({ userId: user.id, config: { subscription } }),
      )
      assert.equal(err.errorCode, 'validationError', name)
      assert.equal(err.errors?.[0]?.field, `config.subscription.${field}`, name)
    }
  })

  it('the VAPID subject: the public https URL, else the mail sender, else a placeholder', () => {
    assert.equal(vapidSubject('https://status.example.com/', null), 'https://status.example.com')
    assert.equal(
      vapidSubject('http://10.0.0.5:3000', 'statusd <ops@example.org>'),
      'mailto:ops@example.org',
    )
    assert.equal(vapidSubject(null, 'ops@example.org'), 'mailto:ops@example.org')
    assert.equal(vapidSubject('https://localhost', null), 'mailto:statusd@localhost')
  })
})

describe('browser push through the API: GET /v1/webpush/key and POST /v1/user/channels are all the app needs', () => {
  async function apiWorld(ctx: TestContext, allowLoopback = true) {
    const t = await makeApp(ctx, {
      deps: {
        ...(allowLoopback && { webhookAllowNetworks: ['127.0.0.0/8'] }),
        vapidSubject: SUBJECT,
        notifications: { autoStart: false },
      },
    })
    const push = await startPushService(ctx)
    const user = await t.user()
    const { publicKey } = (await t.request(user, 'GET', '/v1/webpush/key')).json()
    return { t, push, user, publicKey }
  }

  it('subscribe (the browser’s toJSON() as it is), test: the worker pushes, the browser decrypts', async (ctx) => {
    const { t, push, user, publicKey } = await apiWorld(ctx)
    const browser = makeSubscription(`${push.origin}/push/dev1`)
    const made = await t.request(user, 'POST', '/v1/user/channels', {
      type: 'webpush',
      config: { subscription: { ...browser.subscription, expirationTime: null } },
    })
    assert.equal(made.statusCode, 201, made.body)
    const channel = made.json()
    assert.equal(channel.verified, true)
    assert.equal(channel.name, 'Browser (127.0.0.1)')
    const test = await t.request(user, 'POST', `/v1/user/channels/${channel.id}/test`)
    assert.equal(test.statusCode, 202, test.body)
    await t.app.deliveryWorker.runOnce()
    const request = await push.next()
    verifiedVapidClaims(request.headers.authorization, publicKey)
    const payload = JSON.parse(browser.decrypt(request.body).toString())
    assert.equal(payload.type, 'channel.test')
    assert.equal(payload.id, test.json().eventId)
    const log = (await t.request(user, 'GET', `/v1/user/channels/${channel.id}/deliveries`)).json()
    assert.equal(log[0]?.statusCode, 201)
  })

  it('a subscription gone (410): the channel is turned off, saying why', async (ctx) => {
    const { t, push, user } = await apiWorld(ctx)
    const browser = makeSubscription(`${push.origin}/push/gone`)
    const channel = (
      await t.request(user, 'POST', '/v1/user/channels', {
        type: 'webpush',
        config: { subscription: browser.subscription },
      })
    ).json()
    push.answer(410)
    await t.request(user, 'POST', `/v1/user/channels/${channel.id}/test`)
    await t.app.deliveryWorker.runOnce()
    const read = (await t.request(user, 'GET', `/v1/user/channels/${channel.id}`)).json()
    assert.equal(read.enabled, false)
    assert.match(read.disabledReason ?? '', /subscription/)
  })

  it('the endpoint goes through the outbound rules: loopback not allowed, nothing is sent', async (ctx) => {
    const { t, push, user } = await apiWorld(ctx, false)
    const browser = makeSubscription(`${push.origin}/push/inside`)
    const channel = (
      await t.request(user, 'POST', '/v1/user/channels', {
        type: 'webpush',
        config: { subscription: browser.subscription },
      })
    ).json()
    await t.request(user, 'POST', `/v1/user/channels/${channel.id}/test`)
    await t.app.deliveryWorker.runOnce()
    assert.equal(push.requests().length, 0)
    const log = (await t.request(user, 'GET', `/v1/user/channels/${channel.id}/deliveries`)).json()
    assert.match(log[0]?.error ?? '', /refused/)
  })

  it('a subscription that is not one: 400 naming the field; unknown properties refused', async (ctx) => {
    const { t, user } = await apiWorld(ctx)
    const good = makeSubscription('https://push.example.com/x').subscription
    for (const [subscription, field] of [
      [{ ...good, keys: { ...good.keys, auth: 'AAAA' } }, 'config.subscription.keys.auth'],
      [{ ...good, endpoint: 'http://push.example.com/x' }, 'config.subscription.endpoint'],
      [{ ...good, extra: 1 }, undefined],
      [{ endpoint: good.endpoint }, undefined],
    ] as const) {
      const res = await t.request(user, 'POST', '/v1/user/channels', {
        type: 'webpush',
        config: { subscription },
      })
      assert.equal(res.statusCode, 400, JSON.stringify(subscription))
      if (field) assert.equal(res.json().errors?.[0]?.field, field)
    }
    assert.deepEqual((await t.request(user, 'GET', '/v1/user/channels')).json(), [])
  })
})
