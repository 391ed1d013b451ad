import assert from 'node:assert/strict'
import { test } from 'node:test'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { type Server, startServer } from '../helpers/processes.ts'
import { SseTestClient } from '../helpers/sse.ts'

// A user an operator disables through one instance is shut out of every instance at once
// (docs/operations.md#operators): their key is refused, and the event streams open with their
// key and their session end, on the other instance too. Real `statusd serve` processes on one
// PostgreSQL database; the servers trust a cached key for 60 s and check open streams every
// 30 s, so nothing but the announcement on the credentials bus can end them in time. The time
// each took is a diagnostic, bounded by REFUSAL_BOUND_MS (a loaded 2-core machine can hold a
// process back).
const CACHE_SECONDS = '60'
const REFUSAL_BOUND_MS = 5_000

const json = { 'content-type': 'application/json' }

test('a user disabled through A is shut out of B at once, on PostgreSQL', {
  skip: postgresOnly,
}, async (t) => {
  const fresh = await testDatabase(t)
  const env = { DATABASE_URL: fresh.url, AUTH_CACHE_SECONDS: CACHE_SECONDS, SIGNUP: 'open' }
  const servers = await Promise.all([
    startServer(t, fresh.url, env),
    startServer(t, fresh.url, env),
  ])
  const [a, b] = servers as [Server, Server]
  // the first user is the first operator; the key the first start prints holds admin
  const operatorKey = await Promise.any(servers.map((s) => s.waitForFirstKey()))

  // Ada signs up through A, makes a status and a key
  const signUp = await fetch(`${a.url}/v1/auth/signup`, {
    method: 'POST',
    headers: { ...json, origin: a.url },
    body: JSON.stringify({
      name: 'Ada',
      email: 'ada@example.com',
      password: 'a long passphrase 1',
    }),
  })
  assert.equal(signUp.status, 201, await signUp.clone().text())
  const adaId = ((await signUp.json()) as { id: string }).id
  const cookie = (signUp.headers.get('set-cookie') ?? '').split(';')[0] as string
  const made = await fetch(`${a.url}/v1/status-keys/desk`, {
    method: 'POST',
    headers: { ...json, cookie, origin: a.url },
    body: JSON.stringify({ value: 'in' }),
  })
  assert.equal(made.status, 201, await made.clone().text())
  const statusId = ((await made.json()) as { id: string }).id
  const keyMade = await fetch(`${a.url}/v1/user/api-keys`, {
    method: 'POST',
    headers: { ...json, cookie, origin: a.url },
    body: '{}',
  })
  assert.equal(keyMade.status, 201, await keyMade.clone().text())
  const adaKey = ((await keyMade.json()) as { key: string }).key

  // on B: a stream with her session, a stream with her key, and her key cached
  const events = `${b.url}/v1/status/${statusId}/events`
  const bySession = await SseTestClient.connect(events, { cookie })
  t.after(() => bySession.close())
  const byKey = await SseTestClient.connect(events, { 'service-api-key': adaKey })
  t.after(() => byKey.close())
  for (const stream of [bySession, byKey]) {
    assert.equal(stream.status, 200)
    assert.equal((await stream.nextEvent()).event, 'status')
  }
  const checkOnB = async () => {
    const res = await fetch(`${b.url}/v1/checkAuth`, { headers: { 'service-api-key': adaKey } })
    await res.arrayBuffer()
    return res.status
  }
  assert.equal(await checkOnB(), 200, 'B has her key cached')

  const disabled = await fetch(`${a.url}/v1/admin/users/${adaId}`, {
    method: 'PATCH',
    headers: { ...json, 'service-api-key': operatorKey },
    body: JSON.stringify({ disabled: true }),
  })
  assert.equal(disabled.status, 200, await disabled.clone().text())
  const started = performance.now()

  for (const [what, stream] of [
    ['session', bySession],
    ['key', byKey],
  ] as const) {
    const end = await stream.nextEvent()
    const ms = performance.now() - started
    assert.equal(end.event, 'unavailable', what)
    assert.deepEqual(JSON.parse(end.data), { reason: 'unauthorized' })
    assert.ok(ms < REFUSAL_BOUND_MS, `the ${what}'s stream ended ${ms} ms after the change`)
    t.diagnostic(`B ended the ${what}'s stream ${Math.round(ms)} ms after A disabled her`)
  }
  // B forgot her cached key when it heard of the change, before it checked the streams
  assert.equal(await checkOnB(), 401, 'B refuses her key')
  const signIn = await fetch(`${b.url}/v1/auth/login`, {
    method: 'POST',
    headers: { ...json, origin: b.url },
    body: JSON.stringify({ email: 'ada@example.com', password: 'a long passphrase 1' }),
  })
  assert.equal(signIn.status, 403, 'she cannot sign in through B either')
  await signIn.arrayBuffer()

  for (const s of servers) assert.equal((await s.stop()).code, 0, s.output())
})
