import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createDatabase } from '../../src/db/create-db.ts'
import { freshDatabase, postgresOnly } from '../helpers/engine.ts'
import { type ServerProcess, startServer } from '../helpers/statusd-instance.ts'

// SPEC §8 / issue 3: stateless instances scale out on one PostgreSQL database. Two real
// server processes start at once on an empty database and serve the same data.

const send = async (
  server: ServerProcess,
  key: string,
  method: string,
  path: string,
  body?: unknown,
) => {
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

test('two instances on one PostgreSQL database', { skip: postgresOnly }, async (t) => {
  const fresh = await freshDatabase()
  const servers = await Promise.all([
    startServer({ DATABASE_URL: fresh.url }),
    startServer({ DATABASE_URL: fresh.url }),
  ])
  const [a, b] = servers as [ServerProcess, ServerProcess]
  t.after(async () => {
    for (const s of servers) await s.stop()
    await fresh.drop()
  })
  // whichever instance created the first user prints its key; give the other time to (not) do so
  await Promise.race(servers.map((s) => s.waitForFirstKey(10_000)))
  await new Promise((r) => setTimeout(r, 300))
  const keys = servers.map((s) => s.firstKey()).filter((k) => k !== undefined)
  const key = keys[0] as string
  const through = (i: number) => (i % 2 === 0 ? a : b)

  await t.test('both start at once on an empty database: one first user, no crash', async () => {
    assert.equal(keys.length, 1, 'exactly one instance created the first user and printed its key')
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
    async () => {
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
      try {
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
      } finally {
        await database.close()
      }
    },
  )

  await t.test('both shut down cleanly on SIGTERM', async () => {
    for (const s of servers) assert.equal(await s.stop(), 0)
  })
})
