import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { createDatabase } from '../../src/db/create-database.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { type Server, startServer } from '../helpers/processes.ts'
import { waitUntil } from '../helpers/sse.ts'

// docs/architecture.md#timed-changes, docs/api.md#values-that-end: with two instances on one
// PostgreSQL database, each due end is written exactly once, even when the instance holding
// some of them (claimed, not yet committed) is killed. Both instances' passes are held
// inside their transactions (the test holds a lock on the history table), so each holds
// claimed ends; one of them is then killed with SIGKILL: its claims go with its connection,
// and the survivor writes them.

const STATUSES = 450

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

test('two instances on PostgreSQL, one killed holding claimed ends: each end written once', {
  skip: postgresOnly,
}, async (t) => {
  const fresh = await testDatabase(t)
  const servers = await Promise.all([startServer(t, fresh.url), startServer(t, fresh.url)])
  const [a, b] = servers as [Server, Server]
  const key = await Promise.any(servers.map((s) => s.waitForFirstKey()))
  const database = createDatabase(fresh.url, { poolSize: 2 })
  t.after(() => database.close())

  const ids: string[] = []
  for (let i = 0; i < STATUSES; i++) {
    const res = await send(i % 2 === 0 ? a : b, key, 'POST', `/v1/status-keys/room-${i}`, {
      value: 'BUSY',
      valueUntil: 'PT1H',
      valueAfter: 'FREE',
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    ids.push(String(res.body.id))
  }

  // the test's own session holds the history table: a pass that claimed ends waits inside
  // its transaction before its first history row
  const holder = new pg.Client({ connectionString: fresh.url })
  await holder.connect()
  t.after(() => holder.end())
  await holder.query('begin')
  await holder.query('lock table status_history in share mode')
  // every end falls due at once (a minute ago: within the catch-up window)
  const due = new Date(Date.now() - 60_000).toISOString()
  await database.db
    .updateTable('statuses')
    .set({ value_until: due })
    .where('id', 'in', ids)
    .execute()

  // both instances' passes have claimed ends and wait on the lock
  const waiting = async () =>
    Number(
      (
        await holder.query(
          `select count(*) as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
        )
      ).rows[0].n,
    )
  await waitUntil(async () => (await waiting()) === 2, 'both instances hold claimed ends')
  const claimedBefore = await database.db
    .selectFrom('statuses')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('value_until', 'is not', null)
    .executeTakeFirstOrThrow()
  assert.equal(Number(claimedBefore.n), STATUSES, 'nothing committed yet')

  const killed = await a.stop('SIGKILL')
  assert.equal(killed.signal, 'SIGKILL')
  await holder.query('commit')

  const written = async () =>
    database.db
      .selectFrom('status_history')
      .select('status_id')
      .where('via', '=', 'schedule')
      .execute()
  await waitUntil(
    async () => (await written()).length >= STATUSES,
    'the survivor writes every end',
    30_000,
  )
  // one more pass of the survivor's finds nothing left (no end pending)
  const pending = await database.db
    .selectFrom('statuses')
    .select('id')
    .where('value_until', 'is not', null)
    .execute()
  assert.deepEqual(pending, [], 'no end left pending')
  const rows = await written()
  assert.equal(rows.length, STATUSES, 'no end written twice')
  assert.equal(new Set(rows.map((r) => r.status_id)).size, STATUSES, 'every end written')
  for (const id of [ids[0], ids[STATUSES - 1]]) {
    const res = await send(b, key, 'GET', `/v1/status/${id}`)
    assert.deepEqual([res.body.value, res.body.valueUntil, res.body.changeCount], ['FREE', null, 2])
  }
})
