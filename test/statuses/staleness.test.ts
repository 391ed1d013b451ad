import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import type { StatusEventPayload } from '../../src/modules/outbox/outbox.service.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { defer, type Lifetime } from '../helpers/cleanup.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { TEST_ENGINE, testDatabase } from '../helpers/engine.ts'
import { runScenarios } from '../helpers/scenarios.ts'
import { createStatus, grant } from '../helpers/sharing.ts'
import { SseTestClient } from '../helpers/sse.ts'

// docs/notifications.md#staleness: `staleAfter` seconds without a value update and a status
// reads stale (`stale`, `staleSince`) everywhere until its next update; the stale detector
// announces each silence once (`status.stale`), across restarts.

const S = 1000
const HOUR = 3600

async function staleEvents(t: TestApp, statusId?: string): Promise<StatusEventPayload[]> {
  let query = t.database.db
    .selectFrom('outbox_events')
    .select('payload')
    .where('type', '=', 'status.stale')
    .orderBy('created_at')
  if (statusId !== undefined) query = query.where('status_id', '=', statusId)
  return (await query.execute()).map((r) => JSON.parse(r.payload) as StatusEventPayload)
}

runScenarios(
  `staleAfter on create, PATCH and POST by key: validation and who may set it [${TEST_ENGINE}]`,
  async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const updater = await t.user()
    const s = await createStatus(t, owner, 'room', { name: 'Room', value: 'FREE' })
    await grant(t, owner, s.id, updater, 'updater')
    const valueKey = await t.request(owner, 'POST', '/v1/user/api-keys', {
      scopes: ['status:read', 'status:value'],
    })
    return {
      t,
      users: { owner, updater, valueKey: { id: owner.id, key: valueKey.json().key } },
      vars: { id: s.id },
    }
  },
  [
    ...([60, 3600, 31_536_000] as const).map((staleAfter) => ({
      name: `PATCH staleAfter ${staleAfter}: 200, read back`,
      method: 'PATCH' as const,
      url: '/v1/status/{id}',
      body: { staleAfter },
      expectStatus: 200,
      expect: (body: Record<string, unknown>) => {
        assert.equal(body.staleAfter, staleAfter)
        assert.equal(body.stale, false)
        assert.equal(body.staleSince, null)
      },
    })),
    {
      name: 'PATCH staleAfter null: 200, never stale',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: { staleAfter: null },
      expectStatus: 200,
      expect: (body) => assert.equal(body.staleAfter, null),
    },
    ...(
      [
        ['59 (below 60)', 59],
        ['31 536 001 (above a year)', 31_536_001],
        ['0', 0],
        ['-60', -60],
        ['a fraction', 60.5],
        ['a numeric string', '60'],
        ['a boolean', true],
      ] as const
    ).map(([what, staleAfter]) => ({
      name: `PATCH staleAfter ${what}: 400 validationError naming staleAfter`,
      method: 'PATCH' as const,
      url: '/v1/status/{id}',
      body: { staleAfter },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: (body: { errors: { field: string }[] }) =>
        assert.ok(body.errors.some((e) => e.field === 'staleAfter')),
    })),
    ...(['stale', 'staleSince'] as const).map((field) => ({
      name: `sending ${field}: 400, read-only`,
      method: 'PATCH' as const,
      url: '/v1/status/{id}',
      body: { [field]: field === 'stale' ? true : null },
      expectStatus: 400,
      expectErrorCode: 'validationError',
    })),
    {
      name: 'POST by key creating with staleAfter: 201, set',
      method: 'POST',
      url: '/v1/status-keys/fresh',
      body: { value: 'ON', staleAfter: 600 },
      expectStatus: 201,
      expect: (body) => {
        assert.equal(body.staleAfter, 600)
        assert.equal(body.stale, false)
      },
    },
    {
      name: 'POST by key updating staleAfter: 200',
      method: 'POST',
      url: '/v1/status-keys/room',
      body: { staleAfter: 120 },
      expectStatus: 200,
      expect: (body) => assert.equal(body.staleAfter, 120),
    },
    {
      name: 'an updater may not set staleAfter (a setting): 403 forbidden',
      as: 'updater',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: { staleAfter: 600 },
      expectStatus: 403,
      expectErrorCode: 'forbidden',
    },
    {
      name: 'a key with status:value alone may not set staleAfter: 403 insufficientScope',
      as: 'valueKey',
      method: 'PATCH',
      url: '/v1/status/{id}',
      body: { staleAfter: 600 },
      expectStatus: 403,
      expectErrorCode: 'insufficientScope',
    },
  ],
)

/** An app on a test clock with a public status that goes stale after an hour. */
async function staleWorld(
  ctx: Lifetime,
  options: { databaseUrl?: string; clock?: TestClock } = {},
) {
  const clock = options.clock ?? testClock()
  const t = await makeApp(ctx, {
    ...(options.databaseUrl !== undefined && { databaseUrl: options.databaseUrl }),
    deps: { clock, publicUrl: 'https://status.example.com' },
  })
  const owner = await t.user({ plan: 'pro' })
  return { t, clock, owner }
}

describe(`stale and staleSince, computed from the clock at read time [${TEST_ENGINE}]`, () => {
  it('not stale before staleAfter passes; stale (with staleSince) after, everywhere; a value update ends it', async (ctx) => {
    const { t, clock, owner } = await staleWorld(ctx)
    const before = clock.now()
    const s = await createStatus(t, owner, 'room', {
      name: 'Room',
      value: 'FREE',
      accessType: 'public',
      staleAfter: HOUR,
    })
    const read = async () => (await t.request(owner, 'GET', `/v1/status/${s.id}`)).json()
    clock.advance(HOUR * S - 60 * S)
    assert.equal((await read()).stale, false, 'a minute short of an hour')
    clock.advance(2 * 60 * S)
    const stale = await read()
    assert.equal(stale.stale, true, 'a minute past an hour, before the detector ran')
    // the silence is timed by the service's clock from the moment of the write
    const since = Date.parse(stale.staleSince)
    assert.ok(since >= before + HOUR * S && since <= clock.now(), stale.staleSince)
    const share = (await t.request(null, 'GET', `/v1/share/${s.shareId}`)).json()
    assert.deepEqual([share.stale, share.staleSince], [true, stale.staleSince], 'the share view')
    const badge = await t.request(null, 'GET', `/s/${s.shareId}/badge.svg`)
    assert.match(badge.body, /FREE · stale/, 'the badge says stale')
    assert.match(badge.body, /#475569/, 'the badge is grey (slate)')
    const page = await t.request(null, 'GET', `/s/${s.shareId}`)
    assert.match(page.body, /Stale since <time datetime="[^"]+"/, 'the share page says since when')
    assert.match(page.body, /class="value c11[^"]* stale"/, 'the share page shows it grey')

    const updated = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    assert.deepEqual([updated.json().stale, updated.json().staleSince], [false, null])
    const fresh = await t.request(null, 'GET', `/s/${s.shareId}/badge.svg`)
    assert.doesNotMatch(fresh.body, /stale/)
  })

  it('a status without a value goes stale from its creation', async (ctx) => {
    const { t, clock, owner } = await staleWorld(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room', staleAfter: 60 })
    clock.advance(61 * S)
    assert.equal((await t.request(owner, 'GET', `/v1/status/${s.id}`)).json().stale, true)
  })

  it('a staleAfter change re-times the current silence; null ends staleness', async (ctx) => {
    const { t, clock, owner } = await staleWorld(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room', value: 'ON' })
    clock.advance(2 * HOUR * S)
    const read = async () => (await t.request(owner, 'GET', `/v1/status/${s.id}`)).json()
    assert.equal((await read()).stale, false, 'no staleAfter: never stale')
    const set = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { staleAfter: HOUR })
    assert.equal(set.json().stale, true, 'silent for two hours, and an hour is the limit')
    assert.equal(
      set.json().staleSince,
      new Date(Date.parse(s.valueUpdatedAt as string) + HOUR * S).toISOString(),
      'stale since the last update plus staleAfter',
    )
    const longer = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { staleAfter: 3 * HOUR })
    assert.equal(longer.json().stale, false, 'three hours are not over yet')
    const off = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { staleAfter: null })
    assert.deepEqual([off.json().stale, off.json().staleSince], [false, null])
  })
})

describe(`the stale detector: one status.stale per silence [${TEST_ENGINE}]`, () => {
  it('fires once per silence, again after a new update and silence; a settings change does not reset it', async (ctx) => {
    const { t, clock, owner } = await staleWorld(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room', value: 'ON', staleAfter: 60 })
    const quiet = await createStatus(t, owner, 'quiet', { name: 'Quiet', value: 'ON' })
    assert.equal(await t.app.staleDetector.runOnce(), 0, 'nothing due yet')
    clock.advance(61 * S)
    assert.equal(await t.app.staleDetector.runOnce(), 1)
    assert.equal(await t.app.staleDetector.runOnce(), 0, 'announced once')
    const [event, ...more] = await staleEvents(t)
    assert.equal(more.length, 0)
    const read = (await t.request(owner, 'GET', `/v1/status/${s.id}`)).json()
    assert.deepEqual(event, {
      status: {
        id: s.id,
        shareId: s.shareId,
        name: 'Room',
        value: 'ON',
        previousValue: 'ON',
        colorNo: 1,
        changeCount: 1,
        url: `https://status.example.com/s/${s.shareId}`,
      },
      at: read.staleSince,
    })
    // a name change is no value update: the silence goes on, and was told already
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { name: 'Room 2' })
    clock.advance(120 * S)
    assert.equal(await t.app.staleDetector.runOnce(), 0)
    // a new value: a new silence, told once more when it turns stale
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'OFF' })
    assert.equal(await t.app.staleDetector.runOnce(), 0, 'not stale right after an update')
    clock.advance(61 * S)
    assert.equal(await t.app.staleDetector.runOnce(), 1)
    const events = await staleEvents(t)
    assert.deepEqual(
      events.map((e) => e.status.value),
      ['ON', 'OFF'],
    )
    assert.equal((await staleEvents(t, quiet.id)).length, 0, 'no staleAfter, never told')
  })

  it('many statuses due at once: each told once, in batches', async (ctx) => {
    const { t, clock, owner } = await staleWorld(ctx)
    const ids: string[] = []
    for (let i = 0; i < 7; i++)
      ids.push((await createStatus(t, owner, `s${i}`, { name: `S ${i}`, staleAfter: 60 })).id)
    clock.advance(61 * S)
    const { detectStale } = await import('../../src/modules/statuses/stale-detector.ts')
    assert.equal(await detectStale({ db: t.database.db, clock }, 3), 7, 'three batches')
    assert.equal(await t.app.staleDetector.runOnce(), 0)
    for (const id of ids) assert.equal((await staleEvents(t, id)).length, 1)
  })

  it('live streams hear when a status turns stale', async (ctx) => {
    const { t, clock, owner } = await staleWorld(ctx)
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as AddressInfo
    const s = await createStatus(t, owner, 'room', { name: 'Room', value: 'ON', staleAfter: 60 })
    const stream = await SseTestClient.connect(
      `http://127.0.0.1:${port}/v1/status/${s.id}/events`,
      {
        'service-api-key': owner.key,
      },
    )
    defer(ctx, () => stream.close())
    const first = await stream.nextEvent()
    assert.equal(JSON.parse(first.data).stale, false)
    clock.advance(61 * S)
    assert.equal(await t.app.staleDetector.runOnce(), 1)
    const next = await stream.nextEvent()
    const body = JSON.parse(next.data)
    assert.equal(body.stale, true)
    assert.equal(typeof body.staleSince, 'string')
    assert.ok(Number(next.id) > Number(first.id), 'a new event id')
  })

  it('survives restarts: told once, including a silence that turned stale while it was down', async (ctx) => {
    let databaseUrl: string
    if (TEST_ENGINE === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'statusd-stale-'))
      defer(ctx, () => rmSync(dir, { recursive: true, force: true }))
      databaseUrl = `sqlite:${join(dir, 'statusd.db')}`
    } else databaseUrl = (await testDatabase(ctx)).url
    const clock = testClock()
    const first = await staleWorld(ctx, { databaseUrl, clock })
    const told = await createStatus(first.t, first.owner, 'a', { name: 'Alpha', staleAfter: 60 })
    const later = await createStatus(first.t, first.owner, 'b', { name: 'Bravo', staleAfter: 600 })
    clock.advance(61 * S)
    assert.equal(await first.t.app.staleDetector.runOnce(), 1, 'A, before the restart')
    await first.t.close()

    // B turns stale while no instance runs
    clock.advance(600 * S)
    const second = await staleWorld(ctx, { databaseUrl, clock })
    await second.t.app.staleDetector.runOnce()
    assert.equal((await staleEvents(second.t, told.id)).length, 1, 'A is not told again')
    assert.equal((await staleEvents(second.t, later.id)).length, 1, 'B is told after the restart')
    await second.t.close()

    const third = await staleWorld(ctx, { databaseUrl, clock })
    assert.equal(await third.t.app.staleDetector.runOnce(), 0)
    assert.equal((await staleEvents(third.t)).length, 2, 'one per silence, across restarts')
  })
})
