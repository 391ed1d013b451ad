import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { asSession, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { testClock } from '../helpers/clock.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { grant } from '../helpers/sharing.ts'
import { startReceiver } from '../helpers/webhook-receiver.ts'

// docs/notifications.md#rules, end to end: a status created in the app gives its creator
// `{"when": "any", "byOthers": true}`; a change made by the creator (their session, any of
// their keys) tells them nothing, a change by another user reaches their webhook. A real
// receiver on 127.0.0.1 (WEBHOOK_ALLOW_NETWORKS), one worker pass at a time, on a test
// clock the timed worker writes values' ends by.

interface World {
  t: TestApp
  /** Ann's session cookie, and Ann through an API key of hers. */
  cookie: string
  ann: TestUser
  bob: TestUser
  statusId: string
  clock: ReturnType<typeof testClock>
}

async function world(ctx: Parameters<typeof makeApp>[0]): Promise<World> {
  const clock = testClock()
  const t = await makeApp(ctx, {
    deps: {
      clock,
      signup: 'open',
      webhookAllowNetworks: ['127.0.0.0/8'],
      notifications: { autoStart: false },
    },
  })
  const { id, cookie } = await signUpUser(t, { email: 'ann@example.com', name: 'Ann' })
  const created = await asSession(t, cookie, 'POST', '/v1/status-keys/room-4', {
    name: 'Room 4',
    value: 'FREE',
  })
  assert.equal(created.statusCode, 201, created.body)
  const key = await asSession(t, cookie, 'POST', '/v1/user/api-keys', { label: 'door sensor' })
  assert.equal(key.statusCode, 201, key.body)
  const ann = { id, key: key.json().key as string }
  const bob = await t.user({ name: 'Bob' })
  const statusId = created.json().id as string
  await grant(t, ann, statusId, bob, 'updater')
  return { t, cookie, ann, bob, statusId, clock }
}

const runOnce = (w: World) => w.t.app.deliveryWorker.runOnce()

describe(`byOthers and the creator's rule, delivered to a real webhook [${TEST_ENGINE}]`, () => {
  it("the creator's own changes tell them nothing; another user's change reaches their webhook", async (ctx) => {
    const w = await world(ctx)
    const receiver = await startReceiver(ctx)
    const channel = await asSession(w.t, w.cookie, 'POST', '/v1/user/channels', {
      type: 'webhook',
      config: { url: `${receiver.origin}/hook`, format: 'standard' },
    })
    assert.equal(channel.statusCode, 201, channel.body)
    const rule = await asSession(w.t, w.cookie, 'GET', `/v1/status/${w.statusId}/notifications`)
    assert.deepEqual(
      { when: rule.json().when, byOthers: rule.json().byOthers },
      { when: 'any', byOthers: true },
    )

    // Ann in the app, then Ann's key: her own changes, whichever credential
    const bySession = await asSession(w.t, w.cookie, 'PATCH', `/v1/status/${w.statusId}`, {
      value: 'BUSY',
    })
    assert.equal(bySession.statusCode, 200, bySession.body)
    const byKey = await w.t.request(w.ann, 'PATCH', `/v1/status/${w.statusId}`, { value: 'AWAY' })
    assert.equal(byKey.statusCode, 200, byKey.body)
    const own = await runOnce(w)
    assert.equal(own.attempted, 0, 'no delivery for the creator’s own changes')

    // Bob, an updater: told
    const byBob = await w.t.request(w.bob, 'PATCH', `/v1/status/${w.statusId}`, { value: 'FREE' })
    assert.equal(byBob.statusCode, 200, byBob.body)
    await runOnce(w)
    const [request, ...more] = await receiver.received(1)
    assert.equal(more.length, 0)
    assert.ok(request)
    assert.equal(request.method, 'POST')
    assert.equal(request.path, '/hook')
    const secret = channel.json().secret as string
    const body = new Webhook(secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    }) as Record<string, unknown>
    assert.equal(body.type, 'status.changed')
    const status = body.status as Record<string, unknown>
    assert.equal(status.value, 'FREE')
    assert.equal(status.previousValue, 'AWAY')
    assert.deepEqual(
      Object.keys(body).sort(),
      ['at', 'id', 'status', 'type'],
      'who made the change is not sent',
    )

    // with byOthers off, Ann's own change is told too
    const off = await asSession(w.t, w.cookie, 'PUT', `/v1/status/${w.statusId}/notifications`, {
      when: 'any',
    })
    assert.equal(off.statusCode, 200, off.body)
    await w.t.request(w.ann, 'PATCH', `/v1/status/${w.statusId}`, { value: 'BUSY' })
    await runOnce(w)
    const all = await receiver.received(2)
    assert.equal(JSON.parse(all[1]?.body ?? '{}').status.value, 'BUSY')
  })

  it('a value’s end counts as made by the user who set it: Ann’s end tells Ann nothing, Bob’s end tells her', async (ctx) => {
    const w = await world(ctx)
    const receiver = await startReceiver(ctx)
    const channel = await asSession(w.t, w.cookie, 'POST', '/v1/user/channels', {
      type: 'webhook',
      config: { url: `${receiver.origin}/hook`, format: 'standard' },
    })
    assert.equal(channel.statusCode, 201, channel.body)
    const path = `/v1/status/${w.statusId}`
    const endIn = { valueUntil: 'PT1M', valueAfter: 'FREE' }

    // Ann, with her key: BUSY for a minute, then FREE by the timed worker
    const mine = await w.t.request(w.ann, 'PATCH', path, { value: 'BUSY', ...endIn })
    assert.equal(mine.statusCode, 200, mine.body)
    w.clock.advance(60_000)
    // note: this pass, or the worker's own one it waits for, writes the end
    await w.t.app.timed.runOnce()
    assert.equal((await w.t.request(w.ann, 'GET', path)).json().value, 'FREE', 'the end applied')
    assert.equal((await runOnce(w)).attempted, 0, 'Ann’s own value and its end: nothing')

    // Bob: AWAY for a minute; his change and its end both reach Ann
    const his = await w.t.request(w.bob, 'PATCH', path, { value: 'AWAY', ...endIn })
    assert.equal(his.statusCode, 200, his.body)
    await runOnce(w)
    w.clock.advance(60_000)
    await w.t.app.timed.runOnce()
    assert.equal((await w.t.request(w.ann, 'GET', path)).json().value, 'FREE', 'the end applied')
    await runOnce(w)
    const told = await receiver.received(2)
    assert.deepEqual(
      told.map((r) => {
        const status = JSON.parse(r.body).status
        return `${status.previousValue} → ${status.value}`
      }),
      ['FREE → AWAY', 'AWAY → FREE'],
    )
  })
})
