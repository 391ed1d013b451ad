import assert from 'node:assert/strict'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { testClock } from '../helpers/clock.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus, grant } from '../helpers/sharing.ts'

// A status's schedule (docs/api.md#schedules): PUT, GET, DELETE by its owner, with a session
// or a key with `status:manage`; `next` from the service's clock.

async function makeKey(t: TestApp, as: TestUser, scopes: string[]): Promise<TestUser> {
  const res = await t.request(as, 'POST', '/v1/user/api-keys', { scopes })
  assert.equal(res.statusCode, 201, res.body)
  return { id: as.id, key: res.json().key }
}

const SHOP = {
  timezone: 'Europe/Berlin',
  entries: [
    { cron: '0 9 * * 1-5', value: 'OPEN', colorNo: 3 },
    { cron: '0 18 * * 1-5', value: 'CLOSED' },
  ],
}

/** An owner's status with a schedule, one without, an updater; the clock on Friday 2026-07-03 12:00Z. */
async function world(ctx: Lifetime): Promise<ScenarioContext> {
  const clock = testClock(Date.parse('2026-07-03T12:00:00Z'))
  const t = await makeApp(ctx, { deps: { clock } })
  const owner = await t.user({ name: 'Owner' })
  const updater = await t.user({ name: 'Updater' })
  const stranger = await t.user({ name: 'Stranger' })
  const shop = await createStatus(t, owner, 'shop', { value: 'CLOSED' })
  const room = await createStatus(t, owner, 'room', { value: 'FREE' })
  await grant(t, owner, shop.id, updater, 'updater')
  const put = await t.request(owner, 'PUT', `/v1/status/${shop.id}/schedule`, SHOP)
  assert.equal(put.statusCode, 200, put.body)
  return {
    t,
    users: {
      owner,
      updater,
      stranger,
      manager: await makeKey(t, owner, ['status:read', 'status:manage']),
      writer: await makeKey(t, owner, ['status:read', 'status:write']),
    },
    vars: { shop: shop.id, room: room.id },
  }
}

const readSchedule = (ctx: ScenarioContext, status: string) =>
  ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/status/${ctx.vars[status]}/schedule`)

const withEntries = (entries: unknown[], timezone = 'Europe/Berlin') => ({ timezone, entries })
const many = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ cron: `${i} 9 * * *`, value: `V${i}` }))

runScenarios('schedules API (docs/api.md#schedules)', world, [
  {
    name: 'GET: the schedule and its next 5 fires, in UTC instants',
    method: 'GET',
    url: '/v1/status/{shop}/schedule',
    expectStatus: 200,
    expect: (b) => {
      assert.deepEqual(Object.keys(b).sort(), ['entries', 'next', 'timezone', 'updatedAt'])
      assert.equal(b.timezone, 'Europe/Berlin')
      assert.deepEqual(b.entries, SHOP.entries)
      assert.deepEqual(b.next, [
        { at: '2026-07-03T16:00:00.000Z', value: 'CLOSED' }, // Friday 18:00 CEST
        { at: '2026-07-06T07:00:00.000Z', value: 'OPEN' }, // Monday 09:00
        { at: '2026-07-06T16:00:00.000Z', value: 'CLOSED' },
        { at: '2026-07-07T07:00:00.000Z', value: 'OPEN' },
        { at: '2026-07-07T16:00:00.000Z', value: 'CLOSED' },
      ])
      assert.equal(b.updatedAt, '2026-07-03T12:00:00.000Z')
    },
  },
  {
    name: 'PUT: replaces the schedule; the time zone is answered as the service spells it',
    method: 'PUT',
    url: '/v1/status/{shop}/schedule',
    body: withEntries([{ cron: ' 30  7 * * * ', value: 'OPEN' }], 'europe/berlin'),
    expectStatus: 200,
    expect: async (b, ctx) => {
      assert.equal(b.timezone, 'Europe/Berlin')
      assert.deepEqual(b.entries, [{ cron: '30 7 * * *', value: 'OPEN' }])
      assert.equal(b.next.length, 5)
      assert.deepEqual(b.next[0], { at: '2026-07-04T05:30:00.000Z', value: 'OPEN' })
      const read = await readSchedule(ctx, 'shop')
      assert.deepEqual(read.json(), b)
    },
  },
  {
    name: 'PUT: a status without a schedule gets one',
    method: 'PUT',
    url: '/v1/status/{room}/schedule',
    body: withEntries([{ cron: '0 12 * * *', value: 'LUNCH' }], 'UTC'),
    expectStatus: 200,
    // the clock stands at 12:00 itself: the next fire is strictly after it, tomorrow's
    expect: (b) => assert.deepEqual(b.next[0], { at: '2026-07-04T12:00:00.000Z', value: 'LUNCH' }),
  },
  {
    name: 'PUT: a key with status:manage may set it',
    as: 'manager',
    method: 'PUT',
    url: '/v1/status/{room}/schedule',
    body: withEntries([{ cron: '0 12 * * *', value: 'LUNCH' }], 'UTC'),
    expectStatus: 200,
  },
  {
    name: 'PUT: 20 entries are taken',
    method: 'PUT',
    url: '/v1/status/{room}/schedule',
    body: withEntries(many(20)),
    expectStatus: 200,
    expect: (b) => assert.equal(b.entries.length, 20),
  },
  {
    name: 'PUT: 21 entries are 400 validationError naming entries',
    method: 'PUT',
    url: '/v1/status/{room}/schedule',
    body: withEntries(many(21)),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (b) =>
      assert.deepEqual(b.errors, [{ field: 'entries', message: 'must have at most 20 entries' }]),
  },
  {
    name: 'PUT: no entries are 400 validationError (DELETE removes a schedule)',
    method: 'PUT',
    url: '/v1/status/{room}/schedule',
    body: withEntries([]),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: "PUT: an invalid cron is 400 validationError naming the entry's cron, and nothing changes",
    method: 'PUT',
    url: '/v1/status/{shop}/schedule',
    body: withEntries([
      { cron: '0 9 * * *', value: 'OPEN' },
      { cron: '0 25 * * *', value: 'CLOSED' },
    ]),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: async (b, ctx) => {
      assert.equal(b.errors.length, 1)
      assert.equal(b.errors[0].field, 'entries.1.cron')
      assert.match(b.errors[0].message, /hour/)
      const read = await readSchedule(ctx, 'shop')
      assert.deepEqual(read.json().entries, SHOP.entries, 'the schedule is as it was')
    },
  },
  {
    name: 'PUT: a cron of 6 fields is 400 validationError',
    method: 'PUT',
    url: '/v1/status/{room}/schedule',
    body: withEntries([{ cron: '0 0 9 * * *', value: 'OPEN' }]),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (b) => assert.deepEqual(b.errors[0].field, 'entries.0.cron'),
  },
  {
    name: 'PUT: an unknown time zone is 400 validationError naming timezone',
    method: 'PUT',
    url: '/v1/status/{room}/schedule',
    body: withEntries([{ cron: '0 9 * * *', value: 'OPEN' }], 'Europe/Atlantis'),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (b) =>
      assert.deepEqual(
        b.errors.map((e: { field: string }) => e.field),
        ['timezone'],
      ),
  },
  {
    name: 'PUT: a value breaking the value rules is 400 validationError naming it',
    method: 'PUT',
    url: '/v1/status/{room}/schedule',
    body: withEntries([{ cron: '0 9 * * *', value: 'MUCH TOO LONG' }]),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (b) => assert.equal(b.errors[0].field, 'entries.0.value'),
  },
  {
    name: 'PUT: an unknown property is 400 validationError',
    method: 'PUT',
    url: '/v1/status/{room}/schedule',
    body: { ...withEntries([{ cron: '0 9 * * *', value: 'OPEN' }]), when: 'now' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'PUT: an updater may not (403)',
    as: 'updater',
    method: 'PUT',
    url: '/v1/status/{shop}/schedule',
    body: SHOP,
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'GET: an updater may not (403)',
    as: 'updater',
    method: 'GET',
    url: '/v1/status/{shop}/schedule',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: 'PUT: a key without status:manage may not (403)',
    as: 'writer',
    method: 'PUT',
    url: '/v1/status/{shop}/schedule',
    body: SHOP,
    expectStatus: 403,
  },
  {
    name: "PUT: another user's private status is 404",
    as: 'stranger',
    method: 'PUT',
    url: '/v1/status/{shop}/schedule',
    body: SHOP,
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'without a key: 401',
    as: null,
    method: 'GET',
    url: '/v1/status/{shop}/schedule',
    expectStatus: 401,
  },
  {
    name: 'GET: a status without a schedule answers no entries, nothing ahead',
    method: 'GET',
    url: '/v1/status/{room}/schedule',
    expectStatus: 200,
    expect: (b) => assert.deepEqual(b, { timezone: null, entries: [], next: [], updatedAt: null }),
  },
  {
    name: 'DELETE: 204, and the schedule is gone',
    method: 'DELETE',
    url: '/v1/status/{shop}/schedule',
    expectStatus: 204,
    expect: async (_b, ctx) => {
      const read = await readSchedule(ctx, 'shop')
      assert.deepEqual(read.json().entries, [])
    },
  },
  {
    name: 'DELETE: a status without a schedule is 204 too',
    method: 'DELETE',
    url: '/v1/status/{room}/schedule',
    expectStatus: 204,
  },
  {
    name: 'DELETE: a status deleted takes its schedule with it',
    method: 'DELETE',
    url: '/v1/status/{shop}',
    expectStatus: 204,
    expect: async (_b, ctx) => {
      const rows = await ctx.t.database.db.selectFrom('status_schedules').selectAll().execute()
      assert.deepEqual(rows, [])
    },
  },
])
