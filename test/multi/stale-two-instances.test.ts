import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createDatabase } from '../../src/db/create-database.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { type Server, startServer } from '../helpers/processes.ts'
import { waitUntil } from '../helpers/sse.ts'

// docs/notifications.md#staleness: with several instances on one PostgreSQL database, each
// silence is announced exactly once. Two real server processes look for stale statuses every
// 20 ms, racing for the same silences; the outbox must hold one status.stale per silence.

const STATUSES = 30
/** A moment long past: a silence set to have turned stale then is due for every instance. */
const LONG_AGO = '2000-01-01T00:00:00.000Z'

const send = async (server: Server, key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      'service-api-key': key,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

test('two instances on PostgreSQL: exactly one status.stale per silence', {
  skip: postgresOnly,
}, async (t) => {
  const fresh = await testDatabase(t)
  const env = { STALE_CHECK_INTERVAL_MS: '20' }
  const servers = await Promise.all([
    startServer(t, fresh.url, env),
    startServer(t, fresh.url, env),
  ])
  const [a, b] = servers as [Server, Server]
  const key = await Promise.any(servers.map((s) => s.waitForFirstKey()))
  const through = (i: number) => (i % 2 === 0 ? a : b)
  const database = createDatabase(fresh.url, { poolSize: 2 })
  t.after(() => database.close())

  const ids: string[] = []
  for (let i = 0; i < STATUSES; i++) {
    const res = await send(through(i), key, 'POST', `/v1/status-keys/device-${i}`, {
      value: 'ON',
      staleAfter: 60,
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    ids.push(String(res.body.id))
  }
  // every silence turns stale at once, long ago: both instances find all of them due
  const silence = () =>
    database.db.updateTable('statuses').set({ stale_at: LONG_AGO }).where('id', 'in', ids).execute()
  const staleEvents = async () =>
    database.db
      .selectFrom('outbox_events')
      .select(['status_id', 'payload'])
      .where('type', '=', 'status.stale')
      .execute()

  await silence()
  await waitUntil(async () => (await staleEvents()).length >= STATUSES, 'every silence is told')
  // both instances serve the status as stale, so both have been looking meanwhile
  for (let i = 0; i < STATUSES; i++) {
    const res = await send(through(i + 1), key, 'GET', `/v1/status/${ids[i]}`)
    assert.equal(res.body.stale, true)
  }

  // a new value starts a new silence on each; it too is told once
  for (let i = 0; i < STATUSES; i++) {
    const res = await send(through(i), key, 'PATCH', `/v1/status/${ids[i]}`, { value: 'OFF' })
    assert.equal(res.body.stale, false)
  }
  await silence()
  await waitUntil(
    async () => (await staleEvents()).length >= 2 * STATUSES,
    'every second silence is told',
  )
  for (let i = 0; i < STATUSES; i++) {
    const res = await send(through(i), key, 'GET', `/v1/status/${ids[i]}`)
    assert.equal(res.body.stale, true)
  }

  const events = await staleEvents()
  assert.equal(events.length, 2 * STATUSES, 'no silence told twice')
  for (const id of ids) {
    const values = events
      .filter((e) => e.status_id === id)
      .map((e) => (JSON.parse(e.payload) as { status: { value: string } }).status.value)
      .sort()
    assert.deepEqual(values, ['OFF', 'ON'], `status ${id}: one per silence`)
  }
  for (const s of servers) assert.ok(s.alive())
})
