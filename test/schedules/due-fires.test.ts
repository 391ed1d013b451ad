import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { scheduleFires } from '../../src/modules/schedules/schedules.service.ts'
import { TIMED_CATCH_UP_MS } from '../../src/modules/timed/timed-worker.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { defer, type Lifetime } from '../helpers/cleanup.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { TEST_ENGINE, testDatabase } from '../helpers/engine.ts'
import { createStatus } from '../helpers/sharing.ts'

// A schedule's fires, written by the timed worker (docs/api.md#schedules): each as an
// ordinary change by the schedule's owner (history `via: "schedule"` without an author,
// changeCount, the colour), once; a fire ends a pending `valueUntil`; after downtime only
// the latest fire of the last 24 hours is written; with several takers at once, each fire
// goes to one of them.

const MIN = 60 * 1000
const HOUR = 60 * MIN
const DAY = 24 * HOUR

/** Monday 2026-07-06 08:00 UTC. */
const MONDAY_8 = Date.parse('2026-07-06T08:00:00Z')

async function world(
  ctx: Lifetime,
  options: { databaseUrl?: string; clock?: TestClock } = {},
): Promise<{ t: TestApp; clock: TestClock }> {
  const clock = options.clock ?? testClock(MONDAY_8)
  const t = await makeApp(ctx, {
    ...(options.databaseUrl !== undefined && { databaseUrl: options.databaseUrl }),
    deps: { clock },
  })
  return { t, clock }
}

async function scheduled(t: TestApp, owner: TestUser, key: string, entries: unknown[]) {
  const status = await createStatus(t, owner, key, { name: `Status ${key}`, value: 'CLOSED' })
  const res = await t.request(owner, 'PUT', `/v1/status/${status.id}/schedule`, {
    timezone: 'UTC',
    entries,
  })
  assert.equal(res.statusCode, 200, res.body)
  return status
}

const read = async (t: TestApp, as: TestUser, id: string) =>
  (await t.request(as, 'GET', `/v1/status/${id}`)).json()

const SHOP = [
  { cron: '0 9 * * *', value: 'OPEN', colorNo: 3 },
  { cron: '0 18 * * *', value: 'CLOSED' },
]

describe(`schedule fires, written by the timed worker [${TEST_ENGINE}]`, () => {
  it('at its time a fire sets the value as an ordinary change by the owner: history via schedule with no author, changeCount, colour', async (ctx) => {
    const { t, clock } = await world(ctx)
    const owner = await t.user()
    const shop = await scheduled(t, owner, 'shop', SHOP)
    clock.advance(HOUR - 1000)
    await t.app.timed.runOnce()
    assert.equal((await read(t, owner, shop.id)).value, 'CLOSED', 'a second early')
    clock.advance(1000)
    await t.app.timed.runOnce()
    const open = await read(t, owner, shop.id)
    assert.deepEqual([open.value, open.colorNo], ['OPEN', 3])
    assert.equal(open.changeCount, (shop.changeCount as number) + 1)
    assert.equal(await t.app.timed.runOnce(), 0, 'written once')
    const history = (await t.request(owner, 'GET', `/v1/status/${shop.id}/history`)).json()
    assert.deepEqual([history[0].value, history[0].via, history[0].by], ['OPEN', 'schedule', null])
    const schedule = (await t.request(owner, 'GET', `/v1/status/${shop.id}/schedule`)).json()
    assert.deepEqual(schedule.next[0], { at: '2026-07-06T18:00:00.000Z', value: 'CLOSED' })

    clock.advance(9 * HOUR)
    await t.app.timed.runOnce()
    assert.equal((await read(t, owner, shop.id)).value, 'CLOSED', 'and at 18:00 the next')
  })

  it('a fire ends a pending valueUntil', async (ctx) => {
    const { t, clock } = await world(ctx)
    const owner = await t.user()
    const shop = await scheduled(t, owner, 'shop', SHOP)
    const busy = await t.request(owner, 'PATCH', `/v1/status/${shop.id}`, {
      value: 'BUSY',
      valueUntil: 'PT2H',
      valueAfter: 'FREE',
    })
    assert.equal(busy.json().valueAfter, 'FREE')
    clock.advance(HOUR)
    await t.app.timed.runOnce()
    const fired = await read(t, owner, shop.id)
    assert.deepEqual([fired.value, fired.valueUntil, fired.valueAfter], ['OPEN', null, null])
    clock.advance(2 * HOUR)
    await t.app.timed.runOnce()
    assert.equal((await read(t, owner, shop.id)).value, 'OPEN', 'the end no longer comes')
  })

  it('a schedule changed or removed fires no more by its old entries', async (ctx) => {
    const { t, clock } = await world(ctx)
    const owner = await t.user()
    const a = await scheduled(t, owner, 'a', SHOP)
    const b = await scheduled(t, owner, 'b', SHOP)
    await t.request(owner, 'PUT', `/v1/status/${a.id}/schedule`, {
      timezone: 'UTC',
      entries: [{ cron: '30 9 * * *', value: 'LATE' }],
    })
    assert.equal((await t.request(owner, 'DELETE', `/v1/status/${b.id}/schedule`)).statusCode, 204)
    clock.advance(HOUR)
    await t.app.timed.runOnce()
    assert.equal((await read(t, owner, a.id)).value, 'CLOSED')
    assert.equal((await read(t, owner, b.id)).value, 'CLOSED')
    clock.advance(30 * MIN)
    await t.app.timed.runOnce()
    assert.equal((await read(t, owner, a.id)).value, 'LATE')
    assert.equal((await read(t, owner, b.id)).value, 'CLOSED')
  })

  it('takers at once each take other fires: every due fire goes to exactly one', async (ctx) => {
    const { t, clock } = await world(ctx)
    const owner = await t.user()
    const ids: string[] = []
    for (let i = 0; i < 12; i++)
      ids.push((await scheduled(t, owner, `room-${i}`, [{ cron: '0 9 * * *', value: 'OPEN' }])).id)
    await t.app.timed.close()
    clock.advance(HOUR)
    const now = clock.now()
    const window = {
      now: new Date(now).toISOString(),
      since: new Date(now - TIMED_CATCH_UP_MS).toISOString(),
    }
    const take = (limit: number) =>
      t.database.db.transaction().execute((tx) => scheduleFires.claimDue(tx, window, limit))
    const taken = await Promise.all([take(5), take(5), take(5)])
    const rest = await take(100)
    const all = [...taken, rest].flatMap((w) => w.writes.map((write) => write.statusId))
    assert.deepEqual([...all].sort(), [...ids].sort(), 'each status once')
  })
})

describe(`schedule fires after downtime [${TEST_ENGINE}]`, () => {
  it('the latest fire missed within 24 hours is written once at start; older ones are skipped', async (ctx) => {
    let databaseUrl: string
    if (TEST_ENGINE === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'statusd-schedules-'))
      defer(ctx, () => rmSync(dir, { recursive: true, force: true }))
      databaseUrl = `sqlite:${join(dir, 'statusd.db')}`
    } else databaseUrl = (await testDatabase(ctx)).url
    const clock = testClock(MONDAY_8)
    const first = await world(ctx, { databaseUrl, clock })
    const owner = await first.t.user()
    const daily = await scheduled(first.t, owner, 'daily', SHOP)
    const weekly = await scheduled(first.t, owner, 'weekly', [{ cron: '0 9 * * 1', value: 'OPEN' }])
    await first.t.close()

    // down until Thursday 11:00: daily missed six fires, the latest Thursday 09:00 OPEN;
    // weekly missed Monday 09:00, more than 24 hours ago
    clock.advance(3 * DAY + 3 * HOUR)
    const second = await world(ctx, { databaseUrl, clock })
    await second.t.app.timed.runOnce()
    assert.equal((await read(second.t, owner, daily.id)).value, 'OPEN')
    assert.equal((await read(second.t, owner, weekly.id)).value, 'CLOSED', 'skipped')
    const schedule = (
      await second.t.request(owner, 'GET', `/v1/status/${weekly.id}/schedule`)
    ).json()
    assert.equal(schedule.next[0].at, '2026-07-13T09:00:00.000Z', 'and goes on next Monday')
    await second.t.close()

    const third = await world(ctx, { databaseUrl, clock })
    assert.equal(await third.t.app.timed.runOnce(), 0, 'once, across restarts')
    const written = await third.t.database.db
      .selectFrom('status_history')
      .select('status_id')
      .where('via', '=', 'schedule')
      .execute()
    assert.deepEqual(
      written.map((r) => r.status_id),
      [daily.id],
    )
  })
})
