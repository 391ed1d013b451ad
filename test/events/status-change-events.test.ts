import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { StatusEventPayload } from '../../src/modules/outbox/outbox.service.ts'
import { asSession, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { createStatus, grant } from '../helpers/sharing.ts'

// docs/notifications.md#rules: every value write on a status with a notification rule
// records a `status.changed` event in its own transaction, with the status as it now is and
// its previous value; nothing else does. docs/notifications.md#delivery: a value write on a
// status nobody has a rule on records none (it would notify nobody).

const PUBLIC_URL = 'https://status.example.com'

interface Recorded {
  id: string
  type: string
  statusId: string | null
  payload: StatusEventPayload
  createdAt: string
}

async function events(t: TestApp): Promise<Recorded[]> {
  const rows = await t.database.db
    .selectFrom('outbox_events')
    .selectAll()
    .where('type', '=', 'status.changed')
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    statusId: r.status_id,
    payload: JSON.parse(r.payload) as StatusEventPayload,
    createdAt: r.created_at,
  }))
}

/** An `any` rule of `user`'s on the status: from now on its value writes record events. */
async function subscribe(t: TestApp, user: TestUser, statusId: string): Promise<void> {
  const res = await t.request(user, 'PUT', `/v1/status/${statusId}/notifications`, { when: 'any' })
  assert.equal(res.statusCode, 200, res.body)
}

const world = async (ctx: Parameters<typeof makeApp>[0]) => {
  const t = await makeApp(ctx, { deps: { publicUrl: PUBLIC_URL, signup: 'open' } })
  const owner = await t.user({ plan: 'pro', name: 'Olivia Owner' })
  return { t, owner }
}

describe(`value writes record status.changed in their transaction [${TEST_ENGINE}]`, () => {
  it('a value write on a status with no notification rule records no status event', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE' })
    for (const value of ['BUSY', 'BUSY']) {
      const res = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value })
      assert.equal(res.statusCode, 200, res.body)
    }
    const post = await t.request(owner, 'POST', '/v1/status-keys/room', { value: 'AWAY' })
    assert.equal(post.statusCode, 200, post.body)
    assert.equal(post.json().changeCount, 4, 'the writes happened')
    assert.deepEqual(await events(t), [], 'creation and three updates: no event')
  })

  it('a value write on a status with a notification rule records one', async (ctx) => {
    const { t, owner } = await world(ctx)
    const other = await createStatus(t, owner, 'desk', { name: 'Desk', value: 'ON' })
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE', colorNo: 3 })
    await subscribe(t, owner, s.id)
    const res = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    assert.equal(res.statusCode, 200, res.body)
    const written = res.json()
    // a rule on one status records nothing for another
    const otherRes = await t.request(owner, 'PATCH', `/v1/status/${other.id}`, { value: 'OFF' })
    assert.equal(otherRes.statusCode, 200, otherRes.body)
    const [event, ...more] = await events(t)
    assert.equal(more.length, 0)
    assert.ok(event)
    assert.match(event.id, /^evt_/, 'a stable event id receivers de-duplicate by')
    assert.equal(event.statusId, s.id)
    assert.deepEqual(event.payload, {
      status: {
        id: s.id,
        shareId: s.shareId,
        name: 'Room 4',
        value: 'BUSY',
        previousValue: 'FREE',
        colorNo: 3,
        changeCount: 2,
        url: `${PUBLIC_URL}/s/${s.shareId}`,
      },
      at: written.valueUpdatedAt,
      // who made the change, for byOthers rules (docs/notifications.md#rules)
      by: owner.id,
    })
    assert.equal(event.createdAt, written.valueUpdatedAt)
  })

  it('a value write after the last rule on the status is removed records none again', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE' })
    await subscribe(t, owner, s.id)
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    const removed = await t.request(owner, 'DELETE', `/v1/status/${s.id}/notifications`)
    assert.ok(removed.statusCode < 300, removed.body)
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'AWAY' })
    assert.deepEqual(
      (await events(t)).map((e) => e.payload.status.value),
      ['BUSY'],
    )
  })

  it('creating without a value records nothing; the first value then does, previousValue null', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4' })
    await subscribe(t, owner, s.id)
    assert.equal((await events(t)).length, 0)
    const res = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'FREE' })
    assert.equal(res.statusCode, 200)
    const [event] = await events(t)
    assert.equal(event?.payload.status.previousValue, null)
    assert.equal(event?.payload.status.value, 'FREE')
    assert.equal(event?.payload.status.changeCount, 1)
  })

  it('PATCH by id, POST by key, an updater and a session each record one, with previousValue', async (ctx) => {
    const { t, owner } = await world(ctx)
    const updater = await t.user()
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE' })
    await grant(t, owner, s.id, updater, 'updater')
    await subscribe(t, owner, s.id)
    const session = await signUpUser(t)
    const writes: [string, () => Promise<{ statusCode: number; body: string }>][] = [
      ['PATCH by id', () => t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })],
      ['POST by key', () => t.request(owner, 'POST', '/v1/status-keys/room', { value: 'AWAY' })],
      ['an updater', () => t.request(updater, 'PATCH', `/v1/status/${s.id}`, { value: 'BACK' })],
    ]
    for (const [what, write] of writes) {
      const res = await write()
      assert.equal(res.statusCode, 200, `${what}: ${res.body}`)
    }
    // a session's write: a status of the signed-up user's own, with a rule of theirs
    const own = await asSession(t, session.cookie, 'POST', '/v1/status-keys/desk', {
      name: 'Desk',
    })
    assert.equal(own.statusCode, 201, own.body)
    const rule = await asSession(
      t,
      session.cookie,
      'PUT',
      `/v1/status/${own.json().id}/notifications`,
      {
        when: 'any',
      },
    )
    assert.equal(rule.statusCode, 200, rule.body)
    const patched = await asSession(t, session.cookie, 'PATCH', `/v1/status/${own.json().id}`, {
      value: 'ON',
    })
    assert.equal(patched.statusCode, 200, patched.body)
    const chain = (await events(t)).map((e) => [
      e.payload.status.previousValue,
      e.payload.status.value,
    ])
    assert.deepEqual(chain, [
      ['FREE', 'BUSY'],
      ['BUSY', 'AWAY'],
      ['AWAY', 'BACK'],
      [null, 'ON'],
    ])
  })

  it('the same value written again is an update: recorded, previousValue equal to value', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE' })
    await subscribe(t, owner, s.id)
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'FREE' })
    const all = await events(t)
    assert.equal(all.length, 1)
    assert.equal(all[0]?.payload.status.previousValue, 'FREE')
    assert.equal(all[0]?.payload.status.value, 'FREE')
    assert.equal(all[0]?.payload.status.changeCount, 2)
  })

  it('a settings change without a value records nothing', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE' })
    await subscribe(t, owner, s.id)
    for (const body of [{ name: 'Room 5' }, { colorNo: 4 }, { description: 'x' }]) {
      const res = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, body)
      assert.equal(res.statusCode, 200, res.body)
    }
    assert.equal((await events(t)).length, 0)
  })

  it('a refused write records nothing (412, 403, 400)', async (ctx) => {
    const { t, owner } = await world(ctx)
    const stranger = await t.user()
    const s = await createStatus(t, owner, 'room', {
      name: 'Room 4',
      value: 'FREE',
      accessType: 'public',
    })
    await subscribe(t, owner, s.id)
    const refused = [
      await t.request(
        owner,
        'PATCH',
        `/v1/status/${s.id}`,
        { value: 'BUSY' },
        { 'if-match': '"nope"' },
      ),
      await t.request(stranger, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' }),
      await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'MUCH TOO LONG' }),
    ]
    assert.deepEqual(
      refused.map((r) => r.statusCode),
      [412, 403, 400],
    )
    assert.equal((await events(t)).length, 0)
  })

  it('an idempotent retry replays the answer and records no second event', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE' })
    await subscribe(t, owner, s.id)
    for (let i = 0; i < 2; i++) {
      const res = await t.request(
        owner,
        'PATCH',
        `/v1/status/${s.id}`,
        { value: 'BUSY' },
        {
          'idempotency-key': 'retry-1',
        },
      )
      assert.equal(res.statusCode, 200, res.body)
    }
    assert.equal((await events(t)).length, 1, 'one update')
  })
})
