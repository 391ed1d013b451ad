import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { TEST_PLANS } from '../helpers/app.ts'
import { tempDir } from '../helpers/cleanup.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { pgbouncerUnavailable, startPgBouncer } from '../helpers/pgbouncer.ts'
import { type Json, type Server, startServer } from '../helpers/processes.ts'
import { SseTestClient, waitUntil } from '../helpers/sse.ts'

// docs/postgres.md#behind-pgbouncer: statusd through Debian's PgBouncer in transaction
// pooling, with DATABASE_URL through the pooler and DATABASE_LISTEN_URL straight to
// PostgreSQL for LISTEN; and without DATABASE_LISTEN_URL, the warning at start.

const skip = postgresOnly || (await pgbouncerUnavailable())

// The first user's plan counts requests, so every API request also runs the rate limit's
// upsert through the pooler.
const PLANS = { counted: { ...TEST_PLANS.unlimited, requestsPerMinute: 100_000 } }

/** The URL with an application_name, so each instance's connections can be told apart. */
const named = (url: string, name: string) => {
  const u = new URL(url)
  u.searchParams.set('application_name', name)
  return u.href
}

const send = async (
  server: Server,
  key: string,
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
) => {
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: {
      'service-api-key': key,
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return {
    status: res.status,
    headers: res.headers,
    body: (text ? JSON.parse(text) : null) as Json,
  }
}

const PROBE_WARNING = /a NOTIFY sent through DATABASE_URL did not reach/

test('behind PgBouncer in transaction pooling', { skip }, async (t) => {
  const fresh = await testDatabase(t)
  const pooler = await startPgBouncer(t, fresh.url)
  t.diagnostic(pooler.version)
  const dir = tempDir(t)
  const plansFile = path.join(dir, 'plans.json')
  fs.writeFileSync(plansFile, JSON.stringify(PLANS))
  const vars = (name: string, listen: boolean) => ({
    PLANS_FILE: plansFile,
    // only NOTIFY can bring a change to another instance's stream, or a revocation to its
    // key cache, within the test
    LIVE_RELAY_INTERVAL_MS: '60000',
    AUTH_CACHE_SECONDS: '60',
    ...(listen && { DATABASE_LISTEN_URL: named(fresh.url, name) }),
  })
  // three instances start at once on an empty schema, all migrating through the pooler: its
  // lock is transaction-scoped (src/db/migrate.ts), so they take turns and none waits for ever
  const servers = await Promise.all([
    startServer(t, named(pooler.url, 'pooled-a'), vars('pooled-a', true)),
    startServer(t, named(pooler.url, 'pooled-b'), vars('pooled-b', true)),
    startServer(t, named(pooler.url, 'pooled-c'), vars('pooled-c', false)),
  ])
  const [a, b, c] = servers as [Server, Server, Server]
  const key = await Promise.any(servers.map((s) => s.waitForFirstKey()))

  await t.test('instances migrate at once through the pooler: one first user', async () => {
    for (const s of servers)
      assert.equal((await send(s, key, 'GET', '/v1/checkAuth')).status, 200, s.output())
    const firstStarts = servers.filter((s) => s.firstKey !== null || s.output().includes(key))
    assert.equal(firstStarts.length, 1, 'exactly one instance created the first user')
  })

  const CREATES = 20
  const UPDATES = 30
  let statusId = ''
  await t.test('writes through both: every one counted, each with its history row', async () => {
    const creates = await Promise.all(
      Array.from({ length: CREATES }, (_, i) =>
        send(i % 2 ? b : a, key, 'POST', '/v1/status-keys/pooled', { value: `c${i}` }),
      ),
    )
    const codes = creates.map((r) => r.status).sort()
    assert.equal(codes.filter((code) => code === 201).length, 1, `one 201, got ${codes.join()}`)
    assert.equal(codes.filter((code) => code === 200).length, CREATES - 1)
    statusId = String(creates[0]?.body.id)
    const updates = await Promise.all(
      Array.from({ length: UPDATES }, (_, i) =>
        send(i % 2 ? a : b, key, 'PATCH', `/v1/status/${statusId}`, { value: `u${i}` }),
      ),
    )
    assert.deepEqual([...new Set(updates.map((r) => r.status))], [200])
    const total = CREATES + UPDATES
    assert.deepEqual(
      updates.map((r) => Number(r.body.changeCount)).sort((x, y) => x - y),
      Array.from({ length: UPDATES }, (_, i) => CREATES + 1 + i),
      'each update saw its own count',
    )
    const history = await send(b, key, 'GET', `/v1/status/${statusId}/history?limit=100`)
    assert.equal(history.status, 200, JSON.stringify(history.body))
    const entries = history.body.items ?? history.body
    assert.equal(entries.length, total, 'one history row per value write')
  })

  await t.test('an idempotent write replays through the other instance', async () => {
    const headers = { 'idempotency-key': 'pooled-once' }
    const body = { value: 'once' }
    const first = await send(a, key, 'PATCH', `/v1/status/${statusId}`, body, headers)
    assert.equal(first.status, 200, JSON.stringify(first.body))
    const replay = await send(b, key, 'PATCH', `/v1/status/${statusId}`, body, headers)
    assert.equal(replay.status, 200)
    assert.equal(replay.headers.get('idempotent-replayed'), 'true')
    assert.deepEqual(replay.body, first.body, 'the first response, replayed')
    const now = await send(c, key, 'GET', `/v1/status/${statusId}`)
    assert.equal(now.body.changeCount, first.body.changeCount, 'written once')
  })

  await t.test(
    'a change through A reaches a stream on B (LISTEN straight to PostgreSQL)',
    async (st) => {
      const stream = await SseTestClient.connect(`${b.url}/v1/status/${statusId}/events`, {
        'service-api-key': key,
      })
      st.after(() => stream.close())
      assert.equal(stream.status, 200)
      const version = Number((await stream.nextEvent()).id)
      const patched = await send(a, key, 'PATCH', `/v1/status/${statusId}`, { value: 'via A' })
      assert.equal(patched.status, 200, JSON.stringify(patched.body))
      const event = await stream.nextEvent()
      assert.deepEqual(
        [event.id, JSON.parse(event.data).value],
        [String(version + 1), 'via A'],
        'delivered by NOTIFY (the outbox relay reads once a minute here)',
      )
    },
  )

  await t.test('a key revoked through A is refused by B at once (the keys channel)', async () => {
    const made = await send(a, key, 'POST', '/v1/user/api-keys', {})
    assert.equal(made.status, 201, JSON.stringify(made.body))
    const other = String(made.body.key)
    assert.equal((await send(b, other, 'GET', '/v1/checkAuth')).status, 200, 'B caches it')
    const revoked = await send(a, key, 'DELETE', `/v1/user/api-keys/${made.body.id}`)
    assert.ok(revoked.status < 300, `revoked: ${revoked.status}`)
    // a bound, not a timing assertion: B trusts a cached key for 60 s unless it hears
    await waitUntil(
      async () => (await send(b, other, 'GET', '/v1/checkAuth')).status === 401,
      'B refuses the revoked key',
    )
  })

  await t.test('without DATABASE_LISTEN_URL the start says what to set', async () => {
    const line = await c.waitForLine((l) => PROBE_WARNING.test(l), 'the LISTEN warning')
    const log = JSON.parse(line)
    assert.equal(log.level, 40, 'at warn')
    assert.match(log.msg, /set DATABASE_LISTEN_URL to a direct connection to PostgreSQL/)
    assert.equal(log.listenVia, 'DATABASE_URL')
    for (const s of [a, b])
      assert.doesNotMatch(s.output(), PROBE_WARNING, 'instances with DATABASE_LISTEN_URL hear it')
    assert.ok(a.alive() && b.alive() && c.alive())
  })
})
