import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Webhook } from 'standardwebhooks'
import type { Mailer } from '../../src/lib/mailer.ts'
import { createMailer } from '../../src/lib/mailer.ts'
import type { NotifiedStatus } from '../../src/modules/notifications/channel-types.ts'
import {
  DISABLE_AFTER_MS,
  RETENTION_MS,
  RETRY,
  retryDelayMs,
} from '../../src/modules/notifications/delivery-worker.ts'
import { recordOutboxEvent } from '../../src/modules/outbox/outbox.service.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { grant } from '../helpers/sharing.ts'
import { startSmtpServer } from '../helpers/smtp.ts'
import { startReceiver } from '../helpers/webhook-receiver.ts'

// docs/notifications.md#delivery: real receivers on 127.0.0.1 (allowed by
// WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8), an injected clock, one worker pass at a time.

interface World {
  t: TestApp
  clock: TestClock
  owner: TestUser
}

async function world(
  ctx: Lifetime,
  {
    timeoutMs,
    mailer,
    worker,
  }: {
    timeoutMs?: number
    mailer?: Mailer
    worker?: { concurrency?: number; claimBatch?: number }
  } = {},
): Promise<World> {
  const clock = testClock(Date.parse('2030-01-01T00:00:00Z'))
  const t = await makeApp(ctx, {
    deps: {
      clock,
      webhookAllowNetworks: ['127.0.0.0/8'],
      ...(mailer && { mailer }),
      notifications: {
        autoStart: false,
        // the longest wait each time: the schedule's bound, deterministic
        random: () => 0.999999,
        ...worker,
        ...(timeoutMs !== undefined && { outbound: { timeoutMs } }),
      },
    },
  })
  return { t, clock, owner: await t.user() }
}

async function addChannel(
  w: World,
  user: TestUser,
  url: string,
  format = 'standard',
): Promise<{ id: string; secret: string | null }> {
  const res = await w.t.request(user, 'POST', '/v1/user/channels', {
    type: 'webhook',
    config: { url, format },
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

const runOnce = (w: World) => w.t.app.deliveryWorker.runOnce()

const deliveriesOf = async (w: World, user: TestUser, channelId: string) =>
  (await w.t.request(user, 'GET', `/v1/user/channels/${channelId}/deliveries`)).json()

// note: made without a value, so that its creation records no status.changed of its own
// (docs/notifications.md#rules); the tests record the changes they deliver themselves
async function statusOf(w: World, user: TestUser, key: string, access = 'private') {
  const res = await w.t.request(user, 'POST', `/v1/status-keys/${key}`, {
    name: `Status ${key}`,
    accessType: access,
  })
  assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body)
  return res.json() as { id: string; shareId: string; name: string }
}

/** A status change as the status write records it (docs/notifications.md#payloads). */
async function recordChange(
  w: World,
  status: { id: string; shareId: string; name: string },
  previousValue: string | null,
  value: string | null,
  type = 'status.changed',
): Promise<string> {
  const at = new Date(w.clock.now()).toISOString()
  const notified: NotifiedStatus = {
    id: status.id,
    shareId: status.shareId,
    name: status.name,
    value,
    previousValue,
    colorNo: 0,
    changeCount: 2,
    url: `http://statusd.test/s/${status.shareId}`,
  }
  return recordOutboxEvent(w.t.database.db, {
    type,
    statusId: status.id,
    payload: { status: notified, at },
    at,
  })
}

async function setRule(
  w: World,
  user: TestUser,
  statusId: string,
  condition: unknown,
  channelIds: string[] | null = null,
) {
  const at = new Date(w.clock.now()).toISOString()
  await w.t.database.db
    .insertInto('notification_rules')
    .values({
      status_id: statusId,
      user_id: user.id,
      condition: JSON.stringify(condition),
      channel_ids: channelIds === null ? null : JSON.stringify(channelIds),
      created_at: at,
      updated_at: at,
    })
    // a subscriber has {"when": "any"} from accepting (docs/notifications.md#rules): replaced
    .onConflict((oc) =>
      oc.columns(['status_id', 'user_id']).doUpdateSet({
        condition: JSON.stringify(condition),
        channel_ids: channelIds === null ? null : JSON.stringify(channelIds),
        updated_at: at,
      }),
    )
    .execute()
}

const verify = (secret: string, request: { body: string; headers: Record<string, unknown> }) =>
  new Webhook(secret).verify(request.body, request.headers as Record<string, string>)

describe('delivery (docs/notifications.md#delivery)', () => {
  it('a test event reaches a standard webhook, signed: the standardwebhooks library verifies it', async (ctx) => {
    const w = await world(ctx)
    const receiver = await startReceiver(ctx)
    const channel = await addChannel(w, w.owner, `${receiver.origin}/hook`)
    const { eventId } = (
      await w.t.request(w.owner, 'POST', `/v1/user/channels/${channel.id}/test`)
    ).json()
    assert.deepEqual(await runOnce(w), { fannedOut: 1, attempted: 1 })
    const [request] = receiver.requests
    assert.ok(request)
    assert.equal(request.path, '/hook')
    assert.equal(request.headers['webhook-id'], eventId)
    assert.equal(request.headers['content-type'], 'application/json')
    const payload = verify(channel.secret as string, request) as Record<string, unknown>
    assert.equal(payload.type, 'channel.test')
    assert.equal(payload.id, eventId)
    assert.match(String(payload.message), /test/)
    assert.throws(
      () => verify(channel.secret as string, { ...request, body: `${request.body} ` }),
      'a changed body fails verification',
    )
    const log = await deliveriesOf(w, w.owner, channel.id)
    assert.equal(log.length, 1)
    assert.deepEqual(
      { ...log[0], durationMs: 0 },
      {
        at: '2030-01-01T00:00:00.000Z',
        eventId,
        eventType: 'channel.test',
        statusCode: 200,
        error: null,
        durationMs: 0,
      },
    )
    assert.deepEqual(await runOnce(w), { fannedOut: 0, attempted: 0 }, 'nothing twice')
  })

  it('a status change reaches the channels of the users whose rule matches and who may see it', async (ctx) => {
    const w = await world(ctx)
    const receiver = await startReceiver(ctx)
    const subscriber = await w.t.user()
    const stranger = await w.t.user()
    const status = await statusOf(w, w.owner, 'door')
    await grant(w.t, w.owner, status.id, subscriber, 'subscriber')
    const ownerHook = await addChannel(w, w.owner, `${receiver.origin}/owner`)
    const ownerOther = await addChannel(w, w.owner, `${receiver.origin}/owner-other`, 'slack')
    const subscriberHook = await addChannel(w, subscriber, `${receiver.origin}/subscriber`)
    await addChannel(w, stranger, `${receiver.origin}/stranger`)
    // the owner: every change, to one of their two channels only
    await setRule(w, w.owner, status.id, 'any', [ownerHook.id])
    // the subscriber: only when it becomes OPEN
    await setRule(w, subscriber, status.id, { changesTo: ['OPEN'] })
    // a rule of someone who cannot see the private status tells them nothing
    await setRule(w, stranger, status.id, 'any')

    const closed = await recordChange(w, status, 'OK', 'CLOSED')
    await runOnce(w)
    assert.deepEqual(
      receiver.requests.map((r) => [r.path, r.headers['webhook-id']]),
      [['/owner', closed]],
    )
    const opened = await recordChange(w, status, 'CLOSED', 'OPEN')
    await runOnce(w)
    assert.deepEqual(
      receiver.requests
        .slice(1)
        .map((r) => r.path)
        .sort(),
      ['/owner', '/subscriber'],
    )
    const toSubscriber = receiver.requests.find((r) => r.path === '/subscriber')
    assert.ok(toSubscriber)
    const body = verify(subscriberHook.secret as string, toSubscriber) as {
      type: string
      id: string
      status: NotifiedStatus
    }
    assert.equal(body.type, 'status.changed')
    assert.equal(body.id, opened)
    assert.deepEqual(
      [body.status.id, body.status.value, body.status.previousValue],
      [status.id, 'OPEN', 'CLOSED'],
    )
    assert.equal(receiver.requests.filter((r) => r.path === '/owner-other').length, 0)
    assert.equal(ownerOther.secret, null)
  })

  it('while the app listens the worker runs by itself: a test is delivered with no pass run by hand', async (ctx) => {
    const receiver = await startReceiver(ctx)
    const t = await makeApp(ctx, { deps: { webhookAllowNetworks: ['127.0.0.0/8'] } })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const owner = await t.user()
    const made = await t.request(owner, 'POST', '/v1/user/channels', {
      type: 'webhook',
      config: { url: `${receiver.origin}/auto`, format: 'standard' },
    })
    const { eventId } = (
      await t.request(owner, 'POST', `/v1/user/channels/${made.json().id}/test`)
    ).json()
    // the test wakes the worker at once: no poll interval to wait out
    const [request] = await receiver.received(1)
    assert.equal(request?.headers['webhook-id'], eventId)
    await t.close()
  })

  it('a failed delivery is retried with the same webhook-id, and the log shows both attempts', async (ctx) => {
    const w = await world(ctx)
    const receiver = await startReceiver(ctx, (_req, res, index) => {
      res.statusCode = index === 0 ? 500 : 200
      res.end(index === 0 ? 'down for a moment' : 'ok')
    })
    const channel = await addChannel(w, w.owner, `${receiver.origin}/flaky`)
    await w.t.request(w.owner, 'POST', `/v1/user/channels/${channel.id}/test`)
    await runOnce(w)
    assert.equal(receiver.requests.length, 1)
    const failing = (await w.t.request(w.owner, 'GET', `/v1/user/channels/${channel.id}`)).json()
    assert.equal(failing.failingSince, '2030-01-01T00:00:00.000Z')
    assert.deepEqual(await runOnce(w), { fannedOut: 0, attempted: 0 }, 'not due before its time')
    w.clock.advance(retryDelayMs(1, () => 0.999999))
    await runOnce(w)
    assert.equal(receiver.requests.length, 2)
    const [first, second] = receiver.requests
    assert.equal(second?.headers['webhook-id'], first?.headers['webhook-id'])
    verify(channel.secret as string, second as never)
    const log = await deliveriesOf(w, w.owner, channel.id)
    assert.deepEqual(
      log.map((a: { statusCode: number; error: string | null }) => [a.statusCode, a.error]),
      [
        [200, null],
        [500, 'HTTP 500'],
      ],
    )
    const healed = (await w.t.request(w.owner, 'GET', `/v1/user/channels/${channel.id}`)).json()
    assert.equal(healed.failingSince, null, 'a success ends the failing streak')
  })

  it('the retry schedule: exponential with full jitter, capped at an hour, at least a second', () => {
    assert.equal(
      retryDelayMs(1, () => 0.5),
      5_000,
    )
    assert.equal(
      retryDelayMs(2, () => 0.5),
      10_000,
    )
    assert.equal(
      retryDelayMs(3, () => 0.999999),
      39_999,
    )
    assert.equal(
      retryDelayMs(30, () => 0.999999),
      RETRY.maxMs - 4,
    )
    assert.equal(
      retryDelayMs(1, () => 0),
      RETRY.minMs,
    )
  })

  it('a channel failing for 24 h: its deliveries are given up, it is disabled, and its owner told on their other channels and by e-mail', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const w = await world(ctx, { mailer: createMailer(smtp.url, 'statusd <statusd@example.com>') })
    const down = await startReceiver(ctx, (_req, res) => {
      res.statusCode = 503
      res.end()
    })
    const up = await startReceiver(ctx)
    const owner = await signedUpOwner(w)
    const broken = await addChannel(w, owner, `${down.origin}/broken`)
    const working = await addChannel(w, owner, `${up.origin}/working`)
    await w.t.request(owner, 'POST', `/v1/user/channels/${broken.id}/test`)
    const times: number[] = []
    for (let hour = 0; hour <= 25; hour++) {
      const before = down.requests.length
      await runOnce(w)
      if (down.requests.length > before) times.push(w.clock.now())
      w.clock.advance(60 * 60 * 1000)
    }
    const start = Date.parse('2030-01-01T00:00:00Z')
    assert.ok(times.length >= 10, `retried many times (${times.length})`)
    assert.ok((times.at(-1) as number) - start <= RETRY.windowMs, 'never past 24 h')
    const delivery = await w.t.database.db
      .selectFrom('deliveries')
      .selectAll()
      .where('channel_id', '=', broken.id)
      .executeTakeFirstOrThrow()
    assert.equal(delivery.state, 'failed')
    const channel = (await w.t.request(owner, 'GET', `/v1/user/channels/${broken.id}`)).json()
    assert.equal(channel.enabled, false)
    assert.match(channel.disabledReason, /failed for 24 hours.*HTTP 503/)
    assert.ok(Date.parse(channel.failingSince) === start)
    // the notice went to the owner's other channel, and by e-mail
    const notice = up.requests.find((r) => JSON.parse(r.body).type === 'channel.disabled')
    assert.ok(notice, 'the other channel was told')
    assert.match(JSON.parse(notice.body).message, /was disabled/)
    assert.ok(up.requests.every((r) => JSON.parse(r.body).type === 'channel.disabled'))
    assert.equal(working.secret !== null, true)
    const mail = await smtp.next()
    assert.equal(mail.subject, `Notification channel "${channel.name}" was disabled`)
    assert.match(mail.text ?? '', /failed for 24 hours/)
    // disabled the moment 24 h of failures were reached, not before
    assert.ok(DISABLE_AFTER_MS === 24 * 3600 * 1000)
    // a disabled channel gets no new status events
    const status = await statusOf(w, owner, 'quiet')
    await setRule(w, owner, status.id, 'any')
    const before = down.requests.length
    await recordChange(w, status, 'OK', 'DOWN')
    await runOnce(w)
    assert.equal(down.requests.length, before)
  })

  it('a redirect is a failure with its status, and is not followed', async (ctx) => {
    const w = await world(ctx)
    const target = await startReceiver(ctx)
    const receiver = await startReceiver(ctx, (_req, res) => {
      res.writeHead(307, { location: `${target.origin}/elsewhere` })
      res.end()
    })
    const channel = await addChannel(w, w.owner, `${receiver.origin}/moved`)
    await w.t.request(w.owner, 'POST', `/v1/user/channels/${channel.id}/test`)
    await runOnce(w)
    assert.equal(receiver.requests.length, 1)
    assert.equal(target.requests.length, 0, 'the redirect was not followed')
    const [attempt] = await deliveriesOf(w, w.owner, channel.id)
    assert.equal(attempt.statusCode, 307)
    assert.match(attempt.error, /redirects are not followed/)
  })

  it('a receiver slower than the timeout fails the attempt', async (ctx) => {
    const w = await world(ctx, { timeoutMs: 300 })
    const receiver = await startReceiver(ctx, async (_req, res) => {
      // answers only once the test ends (the receiver closes its connections)
      res.on('close', () => {})
    })
    const channel = await addChannel(w, w.owner, `${receiver.origin}/slow`)
    await w.t.request(w.owner, 'POST', `/v1/user/channels/${channel.id}/test`)
    await runOnce(w)
    const [attempt] = await deliveriesOf(w, w.owner, channel.id)
    assert.equal(attempt.statusCode, null)
    assert.match(attempt.error, /no answer within 300 ms/)
  })

  it('a 10 MB answer: 64 KiB are read, the connection is dropped, the delivery counts', async (ctx) => {
    const w = await world(ctx)
    let closedEarly = false
    const receiver = await startReceiver(ctx, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      const chunk = Buffer.alloc(64 * 1024, 'x')
      let sent = 0
      res.on('close', () => {
        closedEarly = !res.writableFinished
      })
      const pump = () => {
        while (sent < 10 * 1024 * 1024) {
          sent += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        res.end()
      }
      pump()
    })
    const channel = await addChannel(w, w.owner, `${receiver.origin}/big`)
    await w.t.request(w.owner, 'POST', `/v1/user/channels/${channel.id}/test`)
    const heapBefore = process.memoryUsage().heapUsed
    await runOnce(w)
    const [attempt] = await deliveriesOf(w, w.owner, channel.id)
    assert.equal(attempt.statusCode, 200)
    assert.equal(attempt.error, null)
    await new Promise((resolve) => setImmediate(resolve))
    await waitFor(() => closedEarly, 'the receiver to see its connection dropped')
    assert.ok(
      process.memoryUsage().heapUsed - heapBefore < 8 * 1024 * 1024,
      'the answer was not held in memory',
    )
  })

  it('a delivery another instance holds is left alone until its lease ends, then taken again', async (ctx) => {
    const w = await world(ctx)
    const receiver = await startReceiver(ctx)
    const channel = await addChannel(w, w.owner, `${receiver.origin}/leased`)
    await w.t.request(w.owner, 'POST', `/v1/user/channels/${channel.id}/test`)
    assert.equal(await w.t.app.deliveryWorker.fanOut(), 1)
    // as if an instance claimed it and died while sending
    const until = new Date(w.clock.now() + 30_000).toISOString()
    await w.t.database.db.updateTable('deliveries').set({ locked_until: until }).execute()
    assert.deepEqual(await runOnce(w), { fannedOut: 0, attempted: 0 })
    w.clock.advance(30_001)
    assert.deepEqual(await runOnce(w), { fannedOut: 0, attempted: 1 })
    assert.equal(receiver.requests.length, 1)
    const row = await w.t.database.db
      .selectFrom('deliveries')
      .select(['state', 'locked_until'])
      .executeTakeFirstOrThrow()
    assert.deepEqual(row, { state: 'delivered', locked_until: null })
  })

  it('two fan-outs of the same events at once make each delivery once', async (ctx) => {
    const w = await world(ctx)
    const receiver = await startReceiver(ctx)
    const channels = [
      await addChannel(w, w.owner, `${receiver.origin}/a`),
      await addChannel(w, w.owner, `${receiver.origin}/b`),
    ]
    const status = await statusOf(w, w.owner, 'twice')
    await setRule(w, w.owner, status.id, 'any')
    await recordChange(w, status, 'OK', 'DOWN')
    // both read the pending event before either writes: as two instances, or a fan-out run
    // again after a crash before its last write
    const worker = w.t.app.deliveryWorker
    assert.deepEqual(await Promise.all([worker.fanOut(), worker.fanOut()]), [1, 1])
    const rows = await w.t.database.db
      .selectFrom('deliveries')
      .select(['channel_id', 'state'])
      .orderBy('channel_id')
      .execute()
    assert.deepEqual(
      rows,
      channels
        .map((c) => ({ channel_id: c.id, state: 'pending' }))
        .sort((a, b) => (a.channel_id < b.channel_id ? -1 : 1)),
    )
    assert.deepEqual(await runOnce(w), { fannedOut: 0, attempted: 2 })
    assert.equal(receiver.requests.length, 2)
  })

  it('a worker that stops lets the deliveries it claimed but did not send go, free to claim at once', async (ctx) => {
    const w = await world(ctx, { worker: { concurrency: 1, claimBatch: 3 } })
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const receiver = await startReceiver(ctx, async (_request, res) => {
      await held
      res.end()
    })
    for (const path of ['/1', '/2', '/3']) {
      const channel = await addChannel(w, w.owner, `${receiver.origin}${path}`)
      await w.t.request(w.owner, 'POST', `/v1/user/channels/${channel.id}/test`)
    }
    const worker = w.t.app.deliveryWorker
    worker.start()
    // one slot: the first is sent, the other two wait in the worker's queue, claimed
    await receiver.received(1)
    const closing = worker.close()
    release()
    await closing
    assert.equal(receiver.requests.length, 1, 'nothing new is sent once it stops')
    const rows = await w.t.database.db
      .selectFrom('deliveries')
      .select(['state', 'locked_until'])
      .orderBy('state')
      .execute()
    assert.deepEqual(rows, [
      { state: 'delivered', locked_until: null },
      { state: 'pending', locked_until: null },
      { state: 'pending', locked_until: null },
    ])
  })

  it('retention: the log keeps the last 100 attempts per channel; settled deliveries and events go after 7 days', async (ctx) => {
    const w = await world(ctx)
    const receiver = await startReceiver(ctx)
    const channel = await addChannel(w, w.owner, `${receiver.origin}/kept`)
    const other = await addChannel(w, w.owner, `${receiver.origin}/other`)
    // one at a time, a millisecond apart: the log's order is the attempts' times
    for (let i = 0; i < 105; i++) {
      await w.t.request(w.owner, 'POST', `/v1/user/channels/${channel.id}/test`)
      await runOnce(w)
      w.clock.advance(1)
    }
    await w.t.request(w.owner, 'POST', `/v1/user/channels/${other.id}/test`)
    await runOnce(w)
    assert.equal(receiver.requests.length, 106)
    const pruned = await w.t.app.deliveryWorker.prune()
    assert.deepEqual(pruned, { attempts: 5, deliveries: 0, events: 0 })
    const log = await deliveriesOf(w, w.owner, channel.id)
    assert.equal(log.length, 100)
    const newest = receiver.requests.filter((r) => r.path === '/kept').slice(-100)
    assert.deepEqual(
      log.map((a: { eventId: string }) => a.eventId).sort(),
      newest.map((r) => r.headers['webhook-id']).sort(),
      'the newest 100 are kept',
    )
    assert.equal((await deliveriesOf(w, w.owner, other.id)).length, 1, 'per channel')
    w.clock.advance(RETENTION_MS + 1000)
    assert.deepEqual(await w.t.app.deliveryWorker.prune(), {
      attempts: 0,
      deliveries: 106,
      events: 106,
    })
    assert.equal((await deliveriesOf(w, w.owner, channel.id)).length, 100, 'the log stays')
  })

  it('slack, discord and ntfy get the bodies their incoming endpoints expect', async (ctx) => {
    const w = await world(ctx)
    const receiver = await startReceiver(ctx)
    const status = await statusOf(w, w.owner, 'build')
    await addChannel(w, w.owner, `${receiver.origin}/slack`, 'slack')
    await addChannel(w, w.owner, `${receiver.origin}/discord`, 'discord')
    await addChannel(w, w.owner, `${receiver.origin}/ntfy/alerts`, 'ntfy')
    await setRule(w, w.owner, status.id, 'any')
    await recordChange(w, status, 'passing', 'failing')
    await runOnce(w)
    const byPath = Object.fromEntries(receiver.requests.map((r) => [r.path, JSON.parse(r.body)]))
    const text = `Status build: passing → failing\nhttp://statusd.test/s/${status.shareId}`
    assert.deepEqual(byPath['/slack'], { text })
    assert.deepEqual(byPath['/discord'], { content: text })
    assert.deepEqual(byPath['/ntfy/'], {
      topic: 'alerts',
      title: 'Status build: passing → failing',
      message: 'Status build: failing',
      tags: ['bell'],
      click: `http://statusd.test/s/${status.shareId}`,
    })
  })
})

/** The app's owner with a verified e-mail address (the disabled-channel notice mails it). */
async function signedUpOwner(w: World): Promise<TestUser> {
  const user = await w.t.user()
  await w.t.database.db
    .updateTable('users')
    .set({
      email: 'ada@example.com',
      email_key: 'ada@example.com',
      email_verified_at: '2030-01-01T00:00:00.000Z',
    })
    .where('id', '=', user.id)
    .execute()
  return user
}

/** Waits (bounded) for a condition that an event on a socket makes true. */
async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10))
  assert.ok(check(), `gave up waiting for ${what}`)
}
