import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { type Server, startServer } from '../helpers/processes.ts'
import { SseTestClient, waitUntil } from '../helpers/sse.ts'

// docs/postgres.md#scaling-out-behind-a-load-balancer: stateless instances scale out on one
// PostgreSQL database. Two real server processes start at once on an empty database and serve the
// same data.

const send = async (server: Server, key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      'service-api-key': key,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & unknown[] }
}

/** The URL with an application_name, so each instance's connections can be told apart. */
const named = (url: string, name: string) => {
  const u = new URL(url)
  u.searchParams.set('application_name', name)
  return u.href
}

test('two instances on one PostgreSQL database', { skip: postgresOnly }, async (t) => {
  const fresh = await testDatabase(t)
  const servers = await Promise.all([
    startServer(t, named(fresh.url, 'statusd-a')),
    startServer(t, named(fresh.url, 'statusd-b')),
  ])
  const [a, b] = servers as [Server, Server]
  // whichever instance created the first user prints its key (that it is one instance only
  // is checked once both have exited, when all they printed has been read)
  const key = await Promise.any(servers.map((s) => s.waitForFirstKey()))
  const through = (i: number) => (i % 2 === 0 ? a : b)

  await t.test('both start at once on an empty database: one first user, no crash', async (st) => {
    const database = createDatabase(fresh.url, { poolSize: 1 })
    st.after(() => database.close())
    const users = await database.db.selectFrom('users').select('id').execute()
    assert.equal(users.length, 1, 'exactly one instance created the first user')
    assert.ok(a.alive() && b.alive())
    for (const s of servers) assert.equal((await send(s, key, 'GET', '/v1/checkAuth')).status, 200)
  })

  const CREATES = 30
  let statusId = ''
  await t.test('concurrent creates of one key through both give exactly one status', async () => {
    const results = await Promise.all(
      Array.from({ length: CREATES }, (_, i) =>
        send(through(i), key, 'POST', '/v1/status-keys/shared-key', { value: `c${i}` }),
      ),
    )
    const codes = results.map((r) => r.status).sort()
    assert.equal(codes.filter((c) => c === 201).length, 1, `one 201, got ${codes.join(',')}`)
    assert.equal(codes.filter((c) => c === 200).length, CREATES - 1)
    assert.equal(new Set(results.map((r) => r.body.id)).size, 1, 'all answered with one status')
    statusId = String(results[0]?.body.id)
    for (const s of servers) {
      const list = await send(s, key, 'GET', '/v1/user/status')
      assert.equal(list.body.length, 1, 'each instance lists that one status')
    }
    const status = await send(b, key, 'GET', `/v1/status/${statusId}`)
    assert.equal(status.body.changeCount, CREATES, 'every call set the value once')
  })

  const UPDATES = 40
  await t.test(
    'concurrent value updates through both are all counted, each with its history row',
    async (st) => {
      const results = await Promise.all(
        Array.from({ length: UPDATES }, (_, i) =>
          send(through(i), key, 'PATCH', `/v1/status/${statusId}`, { value: `u${i}` }),
        ),
      )
      assert.deepEqual([...new Set(results.map((r) => r.status))], [200])
      const counts = results.map((r) => Number(r.body.changeCount)).sort((x, y) => x - y)
      assert.deepEqual(
        counts,
        Array.from({ length: UPDATES }, (_, i) => CREATES + 1 + i),
        'each update saw its own count',
      )
      const total = CREATES + UPDATES
      for (const s of servers)
        assert.equal((await send(s, key, 'GET', `/v1/status/${statusId}`)).body.changeCount, total)

      const database = createDatabase(fresh.url, { poolSize: 1 })
      st.after(() => database.close())
      const history = await database.db
        .selectFrom('status_history')
        .select(['change_no', 'value'])
        .where('status_id', '=', statusId)
        .orderBy('change_no')
        .execute()
      assert.deepEqual(
        history.map((h) => h.change_no),
        Array.from({ length: total }, (_, i) => i + 1),
        'one history row per value update, numbered without gaps',
      )
      const final = await send(a, key, 'GET', `/v1/status/${statusId}`)
      assert.equal(history[history.length - 1]?.value, final.body.value)
    },
  )

  // docs/sharing.md#several-instances-postgresql-listennotify: every instance delivers every change
  // — through each instance's LISTEN connection (src/modules/events/pg-event-bus.ts)
  await t.test(
    'an event stream on A gets the change made through B’s API, with its id',
    async (st) => {
      const url = `${a.url}/v1/status/${statusId}/events`
      const stream = await SseTestClient.connect(url, { 'service-api-key': key })
      st.after(() => stream.close())
      assert.equal(stream.status, 200)
      const first = await stream.nextEvent()
      const version = Number(first.id)
      assert.equal(JSON.parse(first.data).changeCount, CREATES + UPDATES)

      const patched = await send(b, key, 'PATCH', `/v1/status/${statusId}`, { value: 'via B' })
      assert.equal(patched.status, 200)
      const event = await stream.nextEvent()
      assert.equal(event.event, 'status')
      assert.equal(event.id, String(version + 1), 'the id is the new version: one more')
      assert.deepEqual(
        [JSON.parse(event.data).value, JSON.parse(event.data).changeCount],
        ['via B', CREATES + UPDATES + 1],
      )
      // and the other way round, on a share stream of B
      const made = await send(a, key, 'PATCH', `/v1/status/${statusId}`, { accessType: 'public' })
      assert.equal(made.status, 200, JSON.stringify(made.body))
      const shareId = String(patched.body.shareId)
      const onB = await SseTestClient.connect(`${b.url}/v1/share/${shareId}/events`)
      st.after(() => onB.close())
      const bFirst = await onB.nextEvent()
      const viaA = await send(a, key, 'PATCH', `/v1/status/${statusId}`, { value: 'via A' })
      assert.equal(viaA.status, 200, JSON.stringify(viaA.body))
      const bEvent = await onB.nextEvent()
      assert.deepEqual(
        [bEvent.id, JSON.parse(bEvent.data).value],
        [String(Number(bFirst.id) + 1), 'via A'],
      )
      // A's stream saw both of those writes too, in order
      const ids = [(await stream.nextEvent()).id, (await stream.nextEvent()).id]
      assert.deepEqual(ids, [String(version + 2), String(version + 3)])
    },
  )

  await t.test(
    'A’s LISTEN connection is terminated: A reconnects by itself and delivers again',
    async (st) => {
      const database = createDatabase(fresh.url, { poolSize: 1 })
      st.after(() => database.close())
      const listenPids = async () =>
        (
          await sql<{ pid: number }>`select pid from pg_stat_activity
          where application_name = 'statusd-a:listen' and datname = current_database()`.execute(
            database.db,
          )
        ).rows.map((r) => r.pid)
      const [pid] = await listenPids()
      assert.ok(pid, 'A has its LISTEN connection, named after its pool')
      assert.equal((await listenPids()).length, 1, 'exactly one per instance')

      const stream = await SseTestClient.connect(`${a.url}/v1/status/${statusId}/events`, {
        'service-api-key': key,
      })
      st.after(() => stream.close())
      const version = Number((await stream.nextEvent()).id)

      await sql`select pg_terminate_backend(${pid})`.execute(database.db)
      // written at once, maybe before A is listening again: then the resync after the
      // reconnect brings it to the stream instead of the NOTIFY. Either way, it arrives.
      const gap = await send(b, key, 'PATCH', `/v1/status/${statusId}`, { value: 'in the gap' })
      assert.equal(gap.status, 200, JSON.stringify(gap.body))
      const event = await stream.nextEvent()
      assert.deepEqual(
        [event.id, JSON.parse(event.data).value],
        [String(version + 1), 'in the gap'],
      )
      let now: number[] = []
      await waitUntil(async () => {
        now = await listenPids()
        return now.length === 1 && now[0] !== pid
      }, 'A listens on a new connection')
      assert.equal(now.length, 1)
      assert.notEqual(now[0], pid, 'a new LISTEN connection')
      assert.match(a.output(), /LISTEN connection lost; reconnecting/)

      await send(b, key, 'PATCH', `/v1/status/${statusId}`, { value: 'after it' })
      const after = await stream.nextEvent()
      assert.deepEqual([after.id, JSON.parse(after.data).value], [String(version + 2), 'after it'])
      assert.ok(a.alive() && b.alive())
    },
  )

  await t.test('both shut down cleanly on SIGTERM; one of them printed the first key', async () => {
    for (const s of servers) assert.equal((await s.stop()).code, 0, s.output())
    assert.equal(
      servers.filter((s) => s.stdout.some((line) => line.includes(key))).length,
      1,
      'exactly one instance printed the first key',
    )
  })
})
