import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { takeDueFires } from '../../src/modules/schedules/schedules.service.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { createStatus } from '../helpers/sharing.ts'

// Which fires fall due (docs/api.md#schedules): each schedule's due fire is taken once, in
// the transaction that applies it; after downtime only the latest fire of the last 24 hours
// is, older ones are skipped; with several takers at once, each fire goes to one of them.

const HOUR = 60 * 60 * 1000

/** An app whose clock stands at Monday 2026-07-06 08:00 UTC, and an owner. */
async function world(t: Parameters<typeof makeApp>[0]) {
  const clock = testClock(Date.parse('2026-07-06T08:00:00Z'))
  const app = await makeApp(t, { deps: { clock } })
  return { app, clock, owner: await app.user() }
}

async function scheduled(app: TestApp, owner: TestUser, key: string, entries: unknown[]) {
  const status = await createStatus(app, owner, key, { value: 'CLOSED' })
  const res = await app.request(owner, 'PUT', `/v1/status/${status.id}/schedule`, {
    timezone: 'UTC',
    entries,
  })
  assert.equal(res.statusCode, 200, res.body)
  return status.id
}

const take = (app: TestApp, clock: TestClock, limit = 100) =>
  app.database.db.transaction().execute((tx) => takeDueFires(tx, new Date(clock.now()), limit))

describe('due schedule fires (docs/api.md#schedules)', () => {
  it('a fire falls due at its time, is taken once, and the next one is set', async (t) => {
    const { app, clock, owner } = await world(t)
    const id = await scheduled(app, owner, 'shop', [
      { cron: '0 9 * * *', value: 'OPEN', colorNo: 3 },
      { cron: '0 18 * * *', value: 'CLOSED' },
    ])
    clock.advance(HOUR - 1)
    assert.deepEqual(await take(app, clock), [], 'not before 09:00')
    clock.advance(1)
    assert.deepEqual(await take(app, clock), [
      {
        statusId: id,
        userId: owner.id,
        value: 'OPEN',
        colorNo: 3,
        at: '2026-07-06T09:00:00.000Z',
      },
    ])
    assert.deepEqual(await take(app, clock), [], 'taken once')
    const row = await app.database.db.selectFrom('status_schedules').selectAll().executeTakeFirst()
    assert.equal(row?.next_fire_at, '2026-07-06T18:00:00.000Z')
  })

  it('after downtime, the latest fire of the last 24 hours is taken once; older ones are not', async (t) => {
    const { app, clock, owner } = await world(t)
    const id = await scheduled(app, owner, 'shop', [
      { cron: '0 9 * * *', value: 'OPEN' },
      { cron: '0 18 * * *', value: 'CLOSED' },
    ])
    clock.advance(3 * 24 * HOUR + 3 * HOUR) // Thursday 11:00: missed 6 fires
    assert.deepEqual(
      (await take(app, clock)).map((f) => [f.statusId, f.value, f.at]),
      [[id, 'OPEN', '2026-07-09T09:00:00.000Z']],
    )
    assert.deepEqual(await take(app, clock), [])
  })

  it('a fire missed by more than 24 hours is skipped, and the schedule goes on', async (t) => {
    const { app, clock, owner } = await world(t)
    await scheduled(app, owner, 'weekly', [{ cron: '0 9 * * 1', value: 'OPEN' }])
    clock.advance(2 * 24 * HOUR) // Wednesday 08:00: Monday 09:00 is 47 hours ago
    assert.deepEqual(await take(app, clock), [])
    const row = await app.database.db.selectFrom('status_schedules').selectAll().executeTakeFirst()
    assert.equal(row?.next_fire_at, '2026-07-13T09:00:00.000Z', 'next Monday')
  })

  it('takers at once each take other fires: every due fire goes to exactly one', async (t) => {
    const { app, clock, owner } = await world(t)
    const ids: string[] = []
    for (let i = 0; i < 12; i++)
      ids.push(await scheduled(app, owner, `room-${i}`, [{ cron: '0 9 * * *', value: 'OPEN' }]))
    clock.advance(HOUR)
    const taken = await Promise.all([take(app, clock, 5), take(app, clock, 5), take(app, clock, 5)])
    const rest = await take(app, clock)
    const all = [...taken.flat(), ...rest].map((f) => f.statusId)
    assert.deepEqual([...all].sort(), [...ids].sort(), 'each status once')
  })

  it("a status's schedule goes when it is deleted, and nothing falls due for it", async (t) => {
    const { app, clock, owner } = await world(t)
    const id = await scheduled(app, owner, 'gone', [{ cron: '0 9 * * *', value: 'OPEN' }])
    assert.equal((await app.request(owner, 'DELETE', `/v1/status/${id}`)).statusCode, 204)
    clock.advance(HOUR)
    assert.deepEqual(await take(app, clock), [])
  })
})
