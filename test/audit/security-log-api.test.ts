import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  FAILURE_WINDOW_MS,
  FAILURES_RECORDED,
  pruneSecurityEvents,
  RETENTION_DAYS,
  recordFailedSignIn,
} from '../../src/modules/audit/audit.service.ts'
import { recordSecurityEvent } from '../../src/modules/audit/security-events.ts'
import { USER_SCOPES } from '../../src/modules/keys/scopes.ts'
import { ensureFirstUser } from '../../src/modules/users/first-user.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'

// Reading the security log (docs/security.md#security-log): each user their own, the last
// 90 days, newest first, paged; operators every account's, narrowed by user and kind.

const DAY_MS = 24 * 60 * 60 * 1000
const iso = (ms: number) => new Date(ms).toISOString()

interface World {
  t: TestApp
  operator: TestUser
  ada: TestUser
  bob: TestUser
}

async function world(ctx: Lifetime): Promise<World> {
  const t = await makeApp(ctx)
  const first = await ensureFirstUser(t.database.db, t.app.plans)
  assert.ok(first)
  const ada = await t.user({ name: 'Ada' })
  const bob = await t.user({ name: 'Bob' })
  return { t, operator: { id: first.user.id, key: first.key }, ada, bob }
}

/** Stores an event `daysAgo` days ago (plus `ms`), of `userId`, acted by `actorId`. */
const store = (
  t: TestApp,
  userId: string | null,
  kind: string,
  daysAgo: number,
  { actorId = userId, ms = 0 }: { actorId?: string | null; ms?: number } = {},
) =>
  recordSecurityEvent(
    t.database.db,
    { kind, userId, actorId, ip: '192.0.2.7', userAgent: 'Firefox', detail: { n: daysAgo } },
    iso(Date.now() - daysAgo * DAY_MS + ms),
  )

const nextOf = (link: unknown): string | undefined => {
  if (typeof link !== 'string') return undefined
  const match = /<[^>]*?(\/v1\/[^>]*)>; rel="next"/.exec(link)
  return match?.[1]
}

/** Follows the `Link` header page by page; every item, in order. */
async function allPages(t: TestApp, as: TestUser, url: string) {
  const items: { id: string; kind: string; detail: { n?: number } | null }[] = []
  for (let next: string | undefined = url; next !== undefined; ) {
    const res = await t.request(as, 'GET', next)
    assert.equal(res.statusCode, 200, res.body)
    items.push(...res.json())
    next = nextOf(res.headers.link)
  }
  return items
}

describe('GET /v1/user/security-events', () => {
  it("answers the caller's own events only, newest first, in the documented shape", async (ctx) => {
    const w = await world(ctx)
    await store(w.t, w.ada.id, 'signIn', 3)
    await store(w.t, w.ada.id, 'passwordChanged', 1)
    await store(w.t, w.bob.id, 'signIn', 2)
    await store(w.t, w.ada.id, 'roleGranted', 2, { actorId: w.bob.id })
    const res = await w.t.request(w.ada, 'GET', '/v1/user/security-events')
    assert.equal(res.statusCode, 200, res.body)
    const kinds = res.json().map((e: { kind: string }) => e.kind)
    // the key t.user made is in her log too, newest of all
    assert.deepEqual(kinds, ['keyCreated', 'passwordChanged', 'roleGranted', 'signIn'])
    const granted = res.json()[2]
    assert.deepEqual(Object.keys(granted).sort(), [
      'actor',
      'at',
      'detail',
      'id',
      'ip',
      'kind',
      'userAgent',
    ])
    assert.deepEqual(granted.actor, { id: w.bob.id, name: 'Bob' })
    assert.equal(granted.ip, '192.0.2.7')
    assert.equal(granted.userAgent, 'Firefox')
    assert.deepEqual(granted.detail, { n: 2 })
    assert.equal(res.json()[0].actor, null, 'a key made outside a request: no actor')
  })

  it('shows the last 90 days only', async (ctx) => {
    const w = await world(ctx)
    await store(w.t, w.ada.id, 'signIn', RETENTION_DAYS + 1)
    await store(w.t, w.ada.id, 'signOut', RETENTION_DAYS - 1)
    const kinds = (await allPages(w.t, w.ada, '/v1/user/security-events')).map((e) => e.kind)
    assert.deepEqual(kinds, ['keyCreated', 'signOut'])
  })

  it('pages with a cursor: every event once, in order, however events share a time', async (ctx) => {
    const w = await world(ctx)
    // five pairs of events at one instant each: the cursor must tell them apart by id
    for (let i = 0; i < 10; i++) await store(w.t, w.ada.id, 'signIn', 10 - Math.floor(i / 2))
    const one = await allPages(w.t, w.ada, '/v1/user/security-events?limit=3')
    const all = (await w.t.request(w.ada, 'GET', '/v1/user/security-events')).json()
    assert.equal(one.length, 11)
    assert.deepEqual(
      one.map((e) => e.id),
      all.map((e: { id: string }) => e.id),
    )
  })

  it('refuses a cursor it did not issue (400)', async (ctx) => {
    const w = await world(ctx)
    const res = await w.t.request(w.ada, 'GET', '/v1/user/security-events?cursor=bogus')
    assert.equal(res.statusCode, 400, res.body)
    assert.equal(res.json().errors[0].field, 'cursor')
  })
})

describe('GET /v1/admin/audit', () => {
  it('is for operators only (403 for anyone else)', async (ctx) => {
    const w = await world(ctx)
    const res = await w.t.request(w.ada, 'GET', '/v1/admin/audit')
    assert.equal(res.statusCode, 403, res.body)
    assert.equal(res.json().errorCode, 'forbidden')
  })

  it("answers every account's events with the account concerned, narrowed by userId and kind", async (ctx) => {
    const w = await world(ctx)
    await store(w.t, w.ada.id, 'signIn', 3)
    await store(w.t, w.bob.id, 'signIn', 2)
    await store(w.t, null, 'signInFailed', 1, { actorId: null })
    await store(w.t, w.bob.id, 'admin.userDisabled', 1, { actorId: w.operator.id, ms: 1 })
    const all = await allPages(w.t, w.operator, '/v1/admin/audit?limit=2')
    assert.equal(all.filter((e) => e.kind === 'signIn').length, 2)
    assert.ok(all.some((e) => e.kind === 'signInFailed'))
    const bobs = (await w.t.request(w.operator, 'GET', `/v1/admin/audit?userId=${w.bob.id}`)).json()
    assert.deepEqual(
      bobs.map((e: { kind: string }) => e.kind),
      ['keyCreated', 'admin.userDisabled', 'signIn'],
    )
    assert.deepEqual(bobs[1].user, { id: w.bob.id, name: 'Bob' })
    assert.deepEqual(bobs[1].actor, { id: w.operator.id, name: 'admin' })
    // a kind, and the filters kept from page to page
    const signIns = await allPages(w.t, w.operator, '/v1/admin/audit?kind=signIn&limit=1')
    assert.deepEqual(
      signIns.map((e) => e.detail?.n),
      [2, 3],
    )
  })

  it('refuses a kind that is no name (400)', async (ctx) => {
    const w = await world(ctx)
    const res = await w.t.request(w.operator, 'GET', '/v1/admin/audit?kind=sign%20in')
    assert.equal(res.statusCode, 400, res.body)
  })

  it("an operator's key without the scope admin gets 403 insufficientScope", async (ctx) => {
    const w = await world(ctx)
    const made = await w.t.request(w.operator, 'POST', '/v1/user/api-keys', {
      scopes: [...USER_SCOPES],
    })
    assert.equal(made.statusCode, 201, made.body)
    const res = await w.t.request(
      { id: w.operator.id, key: made.json().key },
      'GET',
      '/v1/admin/audit',
    )
    assert.equal(res.statusCode, 403, res.body)
    assert.equal(res.json().errorCode, 'insufficientScope')
  })
})

describe('retention and bounds', () => {
  it('the housekeeping deletes events past 90 days, in batches, and keeps the rest', async (ctx) => {
    const w = await world(ctx)
    for (let i = 0; i < 7; i++) await store(w.t, w.ada.id, 'signIn', RETENTION_DAYS + 1 + i)
    await store(w.t, w.ada.id, 'signOut', RETENTION_DAYS - 1)
    const pruned = await pruneSecurityEvents(w.t.database.db, { chunk: 3 })
    assert.equal(pruned, 7)
    const left = await w.t.database.db
      .selectFrom('security_events')
      .select('kind')
      .where('user_id', '=', w.ada.id)
      .orderBy('kind')
      .execute()
    assert.deepEqual(
      left.map((r) => r.kind),
      ['keyCreated', 'signOut'],
    )
  })

  it('a flood of failed sign-ins records a bounded number of events, per account and for unknown addresses', async (ctx) => {
    const w = await world(ctx)
    // as if from endless client addresses, which the sign-in throttle does not stop
    const failure = (userId: string | null) => ({
      userId,
      ip: '203.0.113.9',
      userAgent: null,
      detail: { method: 'password' },
    })
    for (let i = 0; i < FAILURES_RECORDED.perAccount + 5; i++)
      await recordFailedSignIn(w.t.database.db, failure(w.ada.id))
    for (let i = 0; i < FAILURES_RECORDED.unknownAddresses + 5; i++)
      await recordFailedSignIn(w.t.database.db, failure(null))
    const count = async (userId: string | null) =>
      (
        await w.t.database.db
          .selectFrom('security_events')
          .select('id')
          .where('kind', '=', 'signInFailed')
          .where('user_id', userId === null ? 'is' : '=', userId)
          .execute()
      ).length
    assert.equal(await count(w.ada.id), FAILURES_RECORDED.perAccount)
    assert.equal(await count(null), FAILURES_RECORDED.unknownAddresses)
    // an hour on, failures are recorded again
    const later = Date.now() + FAILURE_WINDOW_MS + 1
    assert.equal(await recordFailedSignIn(w.t.database.db, failure(w.ada.id), later), true)
  })
})
