import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { createDatabase } from '../../src/db/create-database.ts'
import { TIMED_BATCH } from '../../src/modules/timed/timed-worker.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { type Server, startServer } from '../helpers/processes.ts'
import { waitUntil } from '../helpers/sse.ts'
import { statusRow } from '../store/fixtures.ts'

// docs/architecture.md#timed-changes, docs/api.md#values-that-end: with two instances on one
// PostgreSQL database, each due end is written exactly once, even when the instance holding
// some of them (claimed, not yet committed) is killed. Both instances' passes are held
// inside their transactions (the test holds a lock on the history table), so each holds
// claimed ends; one of them is then killed with SIGKILL: its claims go with its connection,
// and the survivor writes them.

// more ends than one pass claims at once, so that both instances claim some
const STATUSES = TIMED_BATCH + 250

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

  // one status through the API (the end as the API stores it), the rest as rows like it
  const first = await send(a, key, 'POST', '/v1/status-keys/room-0', {
    value: 'BUSY',
    valueUntil: 'PT1H',
    valueAfter: 'FREE',
  })
  assert.equal(first.status, 201, JSON.stringify(first.body))
  const stored = await database.db
    .selectFrom('statuses')
    .selectAll()
    .where('id', '=', String(first.body.id))
    .executeTakeFirstOrThrow()
  assert.deepEqual([stored.value_after, typeof stored.value_until_by], ['FREE', 'string'])
  const seeded = Array.from({ length: STATUSES - 1 }, (_, i) =>
    statusRow(stored.owner_id, {
      status_key: `room-${i + 1}`,
      value: 'BUSY',
      value_after: 'FREE',
      value_until_by: stored.value_until_by,
    }),
  )
  for (let i = 0; i < seeded.length; i += 500)
    await database.db
      .insertInto('statuses')
      .values(seeded.slice(i, i + 500))
      .execute()
  const ids = [stored.id, ...seeded.map((r) => r.id)]

  // the test's own session holds the history table: a pass that claimed ends waits inside
  // its transaction before its first history row
  const holder = new pg.Client({ connectionString: fresh.url })
  await holder.connect()
  t.after(async () => {
    await holder.query('rollback').catch(() => {})
    await holder.end()
  })
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
  for (const id of [ids[0], ids.at(-1)]) {
    const res = await send(b, key, 'GET', `/v1/status/${id}`)
    assert.deepEqual(
      [res.body.value, res.body.valueUntil, res.body.valueAfter],
      ['FREE', null, null],
    )
  }
})
