import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { defer, type Lifetime } from '../helpers/cleanup.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { TEST_ENGINE, testDatabase } from '../helpers/engine.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus, grant } from '../helpers/sharing.ts'
import { SseTestClient } from '../helpers/sse.ts'

// docs/api.md#values-that-end: `valueUntil` and `valueAfter` on every write path, shown on
// the Status; the timed worker writes the end as an ordinary change (history `via:
// "schedule"`, live event, notifications, changeCount); a later value write or
// `valueUntil: null` cancels it; after downtime, an end missed within 24 hours is written
// once at start, older ones are skipped.

const MIN = 60 * 1000
const HOUR = 60 * MIN
const DAY = 24 * HOUR

/** An app on a test clock (which stands still until the test moves it). */
async function endsWorld(ctx: Lifetime, options: { databaseUrl?: string; clock?: TestClock } = {}) {
  const clock = options.clock ?? testClock()
  const t = await makeApp(ctx, {
    ...(options.databaseUrl !== undefined && { databaseUrl: options.databaseUrl }),
    deps: { clock },
  })
  return { t, clock }
}

runScenarios(
  `valueUntil and valueAfter on PATCH, POST by key and the plain-text PUT [${TEST_ENGINE}]`,
  async (ctx) => {
    const { t } = await endsWorld(ctx)
    const owner = await t.user()
    const updater = await t.user()
    const subscriber = await t.user()
    const s = await createStatus(t, owner, 'room', { name: 'Room', value: 'FREE' })
    await grant(t, owner, s.id, updater, 'updater')
    await grant(t, owner, s.id, subscriber, 'subscriber')
    const valueKey = await t.request(owner, 'POST', '/v1/user/api-keys', {
      scopes: ['status:read', 'status:value'],
    })
    return {
      t,
      users: {
        owner,
        updater,
        subscriber,
        valueKey: { id: owner.id, key: valueKey.json().key },
      },
      vars: { id: s.id },
    }
  },
  [
    {
      name: 'PATCH value BUSY for PT45M: 200, valueUntil 45 minutes on, valueAfter the value before',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: { value: 'BUSY', valueUntil: 'PT45M' },
      expectStatus: 200,
      expect: (body) => {
        assert.equal(body.value, 'BUSY')
        // counted from the service's clock (the test's), set a moment before the write
        const ahead = Date.parse(body.valueUntil) - Date.parse(body.valueUpdatedAt)
        assert.ok(ahead > 44 * MIN && ahead <= 45 * MIN, body.valueUntil)
        assert.equal(body.valueAfter, 'FREE')
      },
    },
    {
      name: 'PATCH with an instant and valueAfter: 200, both shown',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: {
        value: 'BUSY',
        valueUntil: new Date(Date.now() + 2 * HOUR).toISOString().replace('Z', '+00:00'),
        valueAfter: 'AWAY',
      },
      expectStatus: 200,
      expect: (body) => {
        assert.match(body.valueUntil, /Z$/)
        assert.equal(body.valueAfter, 'AWAY')
      },
    },
    {
      name: 'PATCH valueUntil null: 200, no end (valueUntil and valueAfter null)',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: { valueUntil: null },
      expectStatus: 200,
      expect: (body) => assert.deepEqual([body.valueUntil, body.valueAfter], [null, null]),
    },
    {
      name: 'POST by key with valueUntil P1D: 200, the end set',
      method: 'POST',
      url: '/v1/status-keys/room',
      body: { value: 'OUT', valueUntil: 'P1D', valueAfter: 'IN' },
      expectStatus: 200,
      expect: (body) =>
        assert.deepEqual([typeof body.valueUntil, body.valueAfter], ['string', 'IN']),
    },
    {
      name: 'POST by key creating with valueUntil and valueAfter: 201',
      method: 'POST',
      url: '/v1/status-keys/fresh',
      body: { value: 'ON', valueUntil: 'PT1M', valueAfter: 'OFF' },
      expectStatus: 201,
      expect: (body) => assert.equal(body.valueAfter, 'OFF'),
    },
    {
      name: 'POST by key creating with valueUntil, no valueAfter: 400, nothing to go back to',
      method: 'POST',
      url: '/v1/status-keys/fresh2',
      body: { value: 'ON', valueUntil: 'PT1H' },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: async (body, ctx) => {
        assert.ok(body.errors.some((e: { field: string }) => e.field === 'valueAfter'))
        const read = await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/status-keys/fresh2')
        assert.equal(read.statusCode, 404, 'nothing was created')
      },
    },
    {
      name: 'plain-text PUT with ?valueUntil=PT45M&valueAfter=FREE: 200, the end set',
      method: 'PUT',
      url: '/v1/status-keys/room/value?valueUntil=PT45M&valueAfter=FREE',
      body: 'BUSY',
      headers: { 'content-type': 'text/plain' },
      expectStatus: 200,
      expect: (body) => {
        assert.equal(body.value, 'BUSY')
        assert.equal(body.valueAfter, 'FREE')
        assert.equal(typeof body.valueUntil, 'string')
      },
    },
    {
      name: 'plain-text PUT with ?valueUntil=PT10S: 400 naming valueUntil',
      method: 'PUT',
      url: '/v1/status-keys/room/value?valueUntil=PT10S',
      body: 'BUSY',
      headers: { 'content-type': 'text/plain' },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: (body) => assert.equal(body.errors[0].field, 'valueUntil'),
    },
    ...(
      [
        ['59 seconds (below a minute)', 'PT59S'],
        ['367 days (above 366)', 'P367D'],
        ['an instant in the past', '2020-01-01T00:00:00Z'],
        ['an instant without its offset', '2099-01-01T00:00:00'],
        ['a word', 'soon'],
        ['an empty duration', 'P'],
        ['a number', 3600],
      ] as const
    ).map(([what, valueUntil]) => ({
      name: `PATCH valueUntil ${what}: 400 validationError naming valueUntil, nothing changed`,
      method: 'PATCH' as const,
      url: '/v1/status/{id}',
      body: { value: 'GONE', valueUntil },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: async (body: { errors: { field: string }[] }, ctx: ScenarioContext) => {
        assert.ok(
          body.errors.some((e) => e.field === 'valueUntil'),
          JSON.stringify(body),
        )
        const read = await ctx.t.request(
          ctx.users.owner ?? null,
          'GET',
          `/v1/status/${ctx.vars.id}`,
        )
        assert.notEqual(read.json().value, 'GONE')
      },
    })),
    {
      name: 'PATCH valueAfter without valueUntil: 400 naming valueAfter',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: { value: 'BUSY', valueAfter: 'FREE' },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: (body) => assert.equal(body.errors[0].field, 'valueAfter'),
    },
    {
      name: 'PATCH valueAfter of 11 characters: 400 naming valueAfter',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: { value: 'BUSY', valueUntil: 'PT1H', valueAfter: 'ABCDEFGHIJK' },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: (body) =>
        assert.ok(body.errors.some((e: { field: string }) => e.field === 'valueAfter')),
    },
    ...(['valueUntil', 'valueAfter'] as const).map((field) => ({
      name: `${field} is shown, and null, on a status without an end`,
      method: 'GET' as const,
      url: '/v1/status-keys/room',
      expectStatus: 200,
      expect: (body: Record<string, unknown>) => assert.ok(field in body),
    })),
    {
      name: 'an updater may give the value an end: 200',
      as: 'updater',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: { value: 'BUSY', valueUntil: 'PT15M' },
      expectStatus: 200,
    },
    {
      name: 'a key with status:value alone may give the value an end: 200',
      as: 'valueKey',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: { value: 'BUSY', valueUntil: 'PT15M', valueAfter: 'FREE' },
      expectStatus: 200,
    },
    {
      name: 'a subscriber may not: 403 forbidden',
      as: 'subscriber',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: { valueUntil: null },
      expectStatus: 403,
      expectErrorCode: 'forbidden',
    },
  ],
)

/** A status reading FREE, then BUSY until 45 minutes on (then FREE again). */
async function busyFor45(t: TestApp, owner: TestUser) {
  const s = await createStatus(t, owner, 'room', { name: 'Room', value: 'FREE' })
  const busy = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, {
    value: 'BUSY',
    valueUntil: 'PT45M',
  })
  assert.equal(busy.statusCode, 200, busy.body)
  return busy.json()
}

const read = async (t: TestApp, owner: TestUser, id: string) =>
  (await t.request(owner, 'GET', `/v1/status/${id}`)).json()

describe(`the end, written by the timed worker [${TEST_ENGINE}]`, () => {
  it('at valueUntil the value goes to valueAfter as an ordinary change: history via schedule with no author, changeCount, a status.changed event', async (ctx) => {
    const { t, clock } = await endsWorld(ctx)
    const owner = await t.user()
    const busy = await busyFor45(t, owner)
    const rule = await t.request(owner, 'PUT', `/v1/status/${busy.id}/notifications`, {
      when: 'any',
    })
    assert.equal(rule.statusCode, 200, rule.body)
    clock.advance(45 * MIN - 1000)
    await t.app.timed.runOnce()
    assert.equal((await read(t, owner, busy.id)).value, 'BUSY', 'a second early: still BUSY')
    clock.advance(1000)
    assert.equal(await t.app.timed.runOnce(), 1)
    assert.equal(await t.app.timed.runOnce(), 0, 'written once')
    const after = await read(t, owner, busy.id)
    assert.equal(after.value, 'FREE')
    assert.deepEqual([after.valueUntil, after.valueAfter], [null, null])
    assert.equal(after.changeCount, busy.changeCount + 1)
    const history = (await t.request(owner, 'GET', `/v1/status/${busy.id}/history`)).json()
    assert.equal(history[0].value, 'FREE')
    assert.equal(history[0].via, 'schedule')
    assert.equal(history[0].by, null, 'no author')
    assert.notEqual(history[1].by, null, 'the ordinary write before it has one')
    const events = await t.database.db
      .selectFrom('outbox_events')
      .select('payload')
      .where('type', '=', 'status.changed')
      .where('status_id', '=', busy.id)
      .execute()
    const last = JSON.parse(events.at(-1)?.payload as string)
    assert.deepEqual([last.status.value, last.status.previousValue], ['FREE', 'BUSY'])
  })

  it('the public view shows the pending end to anyone, and no end once it is written', async (ctx) => {
    const { t, clock } = await endsWorld(ctx)
    const owner = await t.user()
    const busy = await busyFor45(t, owner)
    const open = await t.request(owner, 'PATCH', `/v1/status/${busy.id}`, { accessType: 'public' })
    assert.equal(open.statusCode, 200, open.body)
    const shared = (await t.request(null, 'GET', `/v1/share/${busy.shareId}`)).json()
    assert.deepEqual(
      [shared.value, shared.valueUntil, shared.valueAfter],
      ['BUSY', busy.valueUntil, 'FREE'],
    )
    clock.advance(45 * MIN)
    assert.equal(await t.app.timed.runOnce(), 1)
    const after = (await t.request(null, 'GET', `/v1/share/${busy.shareId}`)).json()
    assert.deepEqual([after.value, after.valueUntil, after.valueAfter], ['FREE', null, null])
  })

  it('a later value write cancels the end; so does valueUntil null; a setting change does not', async (ctx) => {
    const { t, clock } = await endsWorld(ctx)
    const owner = await t.user()
    const a = await busyFor45(t, owner)
    const named = await t.request(owner, 'PATCH', `/v1/status/${a.id}`, { name: 'Room A' })
    assert.equal(named.json().valueAfter, 'FREE', 'a name change keeps the end')
    const away = await t.request(owner, 'POST', '/v1/status-keys/room', { value: 'AWAY' })
    assert.deepEqual([away.json().valueUntil, away.json().valueAfter], [null, null])
    const b = (
      await t.request(owner, 'POST', '/v1/status-keys/b', {
        name: 'Room B',
        value: 'ON',
        valueUntil: 'PT1H',
        valueAfter: 'OFF',
      })
    ).json()
    const cancelled = await t.request(owner, 'PATCH', `/v1/status/${b.id}`, { valueUntil: null })
    assert.equal(cancelled.json().valueUntil, null)
    clock.advance(2 * HOUR)
    assert.equal(await t.app.timed.runOnce(), 0, 'nothing left to end')
    assert.equal((await read(t, owner, a.id)).value, 'AWAY')
    assert.equal((await read(t, owner, b.id)).value, 'ON')
  })

  it('the end is written for the user who set it: an updater who lost the role has it dropped', async (ctx) => {
    const { t, clock } = await endsWorld(ctx)
    const owner = await t.user()
    const updater = await t.user()
    const s = await createStatus(t, owner, 'room', { name: 'Room', value: 'FREE' })
    await grant(t, owner, s.id, updater, 'updater')
    const set = await t.request(updater, 'PATCH', `/v1/status/${s.id}`, {
      value: 'BUSY',
      valueUntil: 'PT1M',
    })
    assert.equal(set.statusCode, 200, set.body)
    const revoke = await t.request(owner, 'DELETE', `/v1/status/${s.id}/users/${updater.id}`)
    assert.equal(revoke.statusCode, 204, revoke.body)
    clock.advance(MIN)
    assert.equal(await t.app.timed.runOnce(), 0)
    const after = await read(t, owner, s.id)
    assert.deepEqual([after.value, after.valueUntil], ['BUSY', null])
  })

  it('many ends due at once: each written once, in batches', async (ctx) => {
    const { t, clock } = await endsWorld(ctx)
    const owner = await t.user({ plan: 'pro' })
    const ids: string[] = []
    for (let i = 0; i < 450; i++) {
      const res = await t.request(owner, 'POST', `/v1/status-keys/s${i}`, {
        name: `S ${i}`,
        value: 'ON',
        valueUntil: 'PT1M',
        valueAfter: 'OFF',
      })
      assert.equal(res.statusCode, 201, res.body)
      ids.push(res.json().id)
    }
    clock.advance(MIN)
    assert.equal(await t.app.timed.runOnce(), 450)
    const rows = await t.database.db
      .selectFrom('status_history')
      .select(['status_id'])
      .where('via', '=', 'schedule')
      .execute()
    assert.equal(rows.length, 450)
    assert.equal(new Set(rows.map((r) => r.status_id)).size, 450)
  })

  it('live streams hear the end, without a pass being asked for: the worker wakes by itself', async (ctx) => {
    const { t, clock } = await endsWorld(ctx)
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as AddressInfo
    const owner = await t.user()
    const busy = await busyFor45(t, owner)
    const stream = await SseTestClient.connect(
      `http://127.0.0.1:${port}/v1/status/${busy.id}/events`,
      { 'service-api-key': owner.key },
    )
    defer(ctx, () => stream.close())
    assert.equal(JSON.parse((await stream.nextEvent()).data).value, 'BUSY')
    clock.advance(45 * MIN)
    const next = JSON.parse((await stream.nextEvent()).data)
    assert.deepEqual([next.value, next.valueUntil], ['FREE', null])
  })
})

describe(`after downtime [${TEST_ENGINE}]`, () => {
  it('an end missed within 24 hours is written once at start; one missed by more is skipped', async (ctx) => {
    let databaseUrl: string
    if (TEST_ENGINE === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'statusd-ends-'))
      defer(ctx, () => rmSync(dir, { recursive: true, force: true }))
      databaseUrl = `sqlite:${join(dir, 'statusd.db')}`
    } else databaseUrl = (await testDatabase(ctx)).url
    const clock = testClock()
    const first = await endsWorld(ctx, { databaseUrl, clock })
    const owner = await first.t.user()
    const set = (key: string, valueUntil: string) =>
      first.t.request(owner, 'POST', `/v1/status-keys/${key}`, {
        name: `Status ${key}`,
        value: 'ON',
        valueUntil,
        valueAfter: 'OFF',
      })
    const early = (await set('early', 'PT1H')).json()
    const late = (await set('late', 'PT2H')).json()
    await first.t.close()

    // down for a day and an hour and a half: `late` ended 23.5 hours ago, `early` 24.5
    clock.advance(DAY + 90 * MIN)
    const second = await endsWorld(ctx, { databaseUrl, clock })
    await second.t.app.timed.runOnce()
    const earlyNow = await read(second.t, owner, early.id)
    const lateNow = await read(second.t, owner, late.id)
    assert.deepEqual([lateNow.value, lateNow.valueUntil], ['OFF', null], 'within 24 hours: written')
    assert.deepEqual(
      [earlyNow.value, earlyNow.valueUntil],
      ['ON', null],
      'more than 24 hours late: skipped',
    )
    assert.equal(await second.t.app.timed.runOnce(), 0)
    await second.t.close()
    const third = await endsWorld(ctx, { databaseUrl, clock })
    assert.equal(await third.t.app.timed.runOnce(), 0, 'once, across restarts')
    const written = await third.t.database.db
      .selectFrom('status_history')
      .select('status_id')
      .where('via', '=', 'schedule')
      .execute()
    assert.deepEqual(
      written.map((r) => r.status_id),
      [late.id],
    )
  })
})
