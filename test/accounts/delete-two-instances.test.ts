import assert from 'node:assert/strict'
import { test } from 'node:test'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { type Server, startServer } from '../helpers/processes.ts'
import { SseTestClient } from '../helpers/sse.ts'

// An account deleted through one instance is gone from every instance
// (docs/accounts.md#delete-your-account): the event streams opened with its session on the
// other instance end, and so do the streams there on the statuses it owned. Real `statusd
// serve` processes on one PostgreSQL database; the servers trust a cached key for 60 s and
// check open streams every 30 s, so only the announcements (the credentials bus, the
// statuses' change relay) end them within the streams' wait bound.
const CACHE_SECONDS = '60'

const json = { 'content-type': 'application/json' }

test('an account deleted through A ends its streams on B, on PostgreSQL', {
  skip: postgresOnly,
}, async (t) => {
  const fresh = await testDatabase(t)
  const env = { DATABASE_URL: fresh.url, AUTH_CACHE_SECONDS: CACHE_SECONDS, SIGNUP: 'open' }
  const servers = await Promise.all([
    startServer(t, fresh.url, env),
    startServer(t, fresh.url, env),
  ])
  const [a, b] = servers as [Server, Server]
  // the first user is the first operator: its key reads public statuses
  const operatorKey = await Promise.any(servers.map((s) => s.waitForFirstKey()))

  // Ada signs up through A and makes a public status; Olivia makes one too
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
  const cookie = (signUp.headers.get('set-cookie') ?? '').split(';')[0] as string
  const made = await fetch(`${a.url}/v1/status-keys/desk`, {
    method: 'POST',
    headers: { ...json, cookie, origin: a.url },
    body: JSON.stringify({ value: 'in', accessType: 'public' }),
  })
  assert.equal(made.status, 201, await made.clone().text())
  const desk = ((await made.json()) as { id: string }).id
  const door = await fetch(`${a.url}/v1/status-keys/door`, {
    method: 'POST',
    headers: { ...json, 'service-api-key': operatorKey },
    body: JSON.stringify({ value: 'open', accessType: 'public' }),
  })
  assert.equal(door.status, 201, await door.clone().text())
  const doorId = ((await door.json()) as { id: string }).id

  // on B: a stream with her session (on Olivia's status), and Olivia's on Ada's status
  const bySession = await SseTestClient.connect(`${b.url}/v1/status/${doorId}/events`, { cookie })
  t.after(() => bySession.close())
  const onHers = await SseTestClient.connect(`${b.url}/v1/status/${desk}/events`, {
    'service-api-key': operatorKey,
  })
  t.after(() => onHers.close())
  for (const stream of [bySession, onHers]) {
    assert.equal(stream.status, 200)
    assert.equal((await stream.nextEvent()).event, 'status')
  }

  const deleted = await fetch(`${a.url}/v1/user`, {
    method: 'DELETE',
    headers: { ...json, cookie, origin: a.url },
    body: JSON.stringify({ password: 'a long passphrase 1' }),
  })
  assert.equal(deleted.status, 204, await deleted.clone().text())

  const ended = await bySession.nextEvent()
  assert.equal(ended.event, 'unavailable')
  assert.deepEqual(JSON.parse(ended.data), { reason: 'unauthorized' })
  await bySession.ended
  const gone = await onHers.nextEvent()
  assert.equal(gone.event, 'unavailable')
  assert.deepEqual(JSON.parse(gone.data), { reason: 'deleted' })
  await onHers.ended

  // her address is free through B at once
  const again = await fetch(`${b.url}/v1/auth/signup`, {
    method: 'POST',
    headers: { ...json, origin: b.url },
    body: JSON.stringify({
      name: 'Ada',
      email: 'ada@example.com',
      password: 'another passphrase 2',
    }),
  })
  assert.equal(again.status, 201, await again.clone().text())
  await again.arrayBuffer()

  for (const s of servers) assert.equal((await s.stop()).code, 0, s.output())
})
