import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { createDatabase } from '../../src/db/create-database.ts'
import { TIMED_BATCH } from '../../src/modules/timed/timed-worker.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { plansWithoutRateLimit } from '../helpers/journey-people.ts'
import { type Server, startServer } from '../helpers/processes.ts'
import { waitUntil } from '../helpers/sse.ts'

// docs/api.md#schedules: with two instances on one PostgreSQL database, each due fire is
// written exactly once, even when the instance holding some of them (claimed, not yet
// committed) is killed. Both instances' passes are held inside their transactions (the test
// holds a lock on the history table), so each holds claimed fires; one of them is then
// killed with SIGKILL: its claims go with its connection, and the survivor writes them.

// more than one pass claims, so that each instance holds some
const STATUSES = TIMED_BATCH + 200

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

test('two instances on PostgreSQL, one killed holding claimed fires: each fire written once', {
  skip: postgresOnly,
}, async (t) => {
  const fresh = await testDatabase(t)
  // the statuses are made faster than the free plan's rate limit allows
  const env = { PLANS_FILE: plansWithoutRateLimit(t) }
  const servers = await Promise.all([
    startServer(t, fresh.url, env),
    startServer(t, fresh.url, env),
  ])
  const [a, b] = servers as [Server, Server]
  const key = await Promise.any(servers.map((s) => s.waitForFirstKey()))
  const database = createDatabase(fresh.url, { poolSize: 2 })
  t.after(() => database.close())

  // one fire a year, at a minute that has just passed: the fire the instances find due,
  // and none after it while the test runs
  const fireAt = new Date(Math.floor((Date.now() - 60_000) / 60_000) * 60_000)
  const cron = `${fireAt.getUTCMinutes()} ${fireAt.getUTCHours()} ${fireAt.getUTCDate()} ${fireAt.getUTCMonth() + 1} *`
  // one schedule through the API (its rules are test/schedules'), the others as rows alike
  const first = await send(a, key, 'POST', '/v1/status-keys/room-0', { value: 'CLOSED' })
  assert.equal(first.status, 201, JSON.stringify(first.body))
  const ids: string[] = [String(first.body.id)]
  const put = await send(a, key, 'PUT', `/v1/status/${ids[0]}/schedule`, {
    timezone: 'UTC',
    entries: [{ cron, value: 'OPEN' }],
  })
  assert.equal(put.status, 200, JSON.stringify(put.body))
  for (let i = 1; i < STATUSES; i += 20)
    for (const made of await Promise.all(
      Array.from({ length: Math.min(20, STATUSES - i) }, (_, j) =>
        send((i + j) % 2 === 0 ? a : b, key, 'POST', `/v1/status-keys/room-${i + j}`, {
          value: 'CLOSED',
        }),
      ),
    )) {
      assert.equal(made.status, 201, JSON.stringify(made.body))
      ids.push(String(made.body.id))
    }
  const model = await database.db
    .selectFrom('status_schedules')
    .selectAll()
    .executeTakeFirstOrThrow()
  await database.db
    .insertInto('status_schedules')
    .values(ids.slice(1).map((id) => ({ ...model, status_id: id })))
    .execute()

  // the test's own session holds the history table: a pass that claimed fires waits inside
  // its transaction before its first history row
  const holder = new pg.Client({ connectionString: fresh.url })
  await holder.connect()
  t.after(() => holder.end())
  await holder.query('begin')
  await holder.query('lock table status_history in share mode')
  // every fire falls due at once: the one a minute ago
  await database.db
    .updateTable('status_schedules')
    .set({ next_fire_at: fireAt.toISOString() })
    .where('status_id', 'in', ids)
    .execute()

  const waiting = async () =>
    Number(
      (
        await holder.query(
          `select count(*) as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
        )
      ).rows[0].n,
    )
  await waitUntil(async () => (await waiting()) === 2, 'both instances hold claimed fires', 60_000)

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
    'the survivor writes every fire',
    30_000,
  )
  const due = await database.db
    .selectFrom('status_schedules')
    .select('status_id')
    .where('next_fire_at', '<=', new Date().toISOString())
    .execute()
  assert.deepEqual(due, [], 'no fire left due')
  const rows = await written()
  assert.equal(rows.length, STATUSES, 'no fire written twice')
  assert.equal(new Set(rows.map((r) => r.status_id)).size, STATUSES, 'every fire written')
  for (const id of [ids[0], ids[STATUSES - 1]]) {
    const res = await send(b, key, 'GET', `/v1/status/${id}`)
    assert.deepEqual([res.body.value, res.body.changeCount], ['OPEN', 2])
  }
})
