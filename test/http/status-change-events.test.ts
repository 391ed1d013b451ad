import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { StatusEventPayload } from '../../src/modules/outbox/outbox.service.ts'
import { asSession, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { createStatus, grant } from '../helpers/sharing.ts'

// docs/notifications.md#rules: every value write records a `status.changed` event in its
// own transaction, with the status as it now is and its previous value; nothing else does.

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

const world = async (ctx: Parameters<typeof makeApp>[0]) => {
  const t = await makeApp(ctx, { deps: { publicUrl: PUBLIC_URL, signup: 'open' } })
  const owner = await t.user({ plan: 'pro', name: 'Olivia Owner' })
  return { t, owner }
}

describe(`value writes record status.changed in their transaction [${TEST_ENGINE}]`, () => {
  it('creating by key with a value: one event, previousValue null, the status as created', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE', colorNo: 3 })
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
        value: 'FREE',
        previousValue: null,
        colorNo: 3,
        changeCount: 1,
        url: `${PUBLIC_URL}/s/${s.shareId}`,
      },
      at: s.valueUpdatedAt,
    })
    assert.equal(event.createdAt, s.valueUpdatedAt)
  })

  it('creating without a value records nothing; the first value then does', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4' })
    assert.equal((await events(t)).length, 0)
    const res = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'FREE' })
    assert.equal(res.statusCode, 200)
    const [event] = await events(t)
    assert.equal(event?.payload.status.previousValue, null)
    assert.equal(event?.payload.status.value, 'FREE')
  })

  it('PATCH by id, POST by key, an updater and a session each record one, with previousValue', async (ctx) => {
    const { t, owner } = await world(ctx)
    const updater = await t.user()
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE' })
    await grant(t, owner, s.id, updater, 'updater')
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
    // a session's write: a status of the signed-up user's own
    const own = await asSession(t, session.cookie, 'POST', '/v1/status-keys/desk', {
      name: 'Desk',
    })
    assert.equal(own.statusCode, 201, own.body)
    const patched = await asSession(t, session.cookie, 'PATCH', `/v1/status/${own.json().id}`, {
      value: 'ON',
    })
    assert.equal(patched.statusCode, 200, patched.body)
    const chain = (await events(t)).map((e) => [
      e.payload.status.previousValue,
      e.payload.status.value,
    ])
    assert.deepEqual(chain, [
      [null, 'FREE'],
      ['FREE', 'BUSY'],
      ['BUSY', 'AWAY'],
      ['AWAY', 'BACK'],
      [null, 'ON'],
    ])
  })

  it('the same value written again is an update: recorded, previousValue equal to value', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE' })
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'FREE' })
    const all = await events(t)
    assert.equal(all.length, 2)
    assert.equal(all[1]?.payload.status.previousValue, 'FREE')
    assert.equal(all[1]?.payload.status.value, 'FREE')
    assert.equal(all[1]?.payload.status.changeCount, 2)
  })

  it('a settings change without a value records nothing', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE' })
    for (const body of [{ name: 'Room 5' }, { colorNo: 4 }, { description: 'x' }]) {
      const res = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, body)
      assert.equal(res.statusCode, 200, res.body)
    }
    assert.equal((await events(t)).length, 1, 'only the creation')
  })

  it('a refused write records nothing (412, 403, 400)', async (ctx) => {
    const { t, owner } = await world(ctx)
    const stranger = await t.user()
    const s = await createStatus(t, owner, 'room', {
      name: 'Room 4',
      value: 'FREE',
      accessType: 'public',
    })
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
    assert.equal((await events(t)).length, 1, 'only the creation')
  })

  it('an idempotent retry replays the answer and records no second event', async (ctx) => {
    const { t, owner } = await world(ctx)
    const s = await createStatus(t, owner, 'room', { name: 'Room 4', value: 'FREE' })
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
    assert.equal((await events(t)).length, 2, 'the creation and one update')
  })
})
