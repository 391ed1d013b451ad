import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { createDatabase } from '../../src/db/create-database.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { type Server, startServer } from '../helpers/processes.ts'
import { startReceiver } from '../helpers/webhook-receiver.ts'

// docs/notifications.md#delivery: with several instances on one PostgreSQL database, each
// delivery is attempted by one instance at a time. Two real server processes deliver a batch
// of events to a receiver that always answers 200: it sees each webhook-id exactly once.

const CHANNELS = 20
const TESTS_PER_CHANNEL = 10

async function send(server: Server, key: string, method: string, path: string, body?: unknown) {
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

test('two instances deliver a batch: every event once, to the right channel, signed', {
  skip: postgresOnly,
}, async (t) => {
  const receiver = await startReceiver(t, async (_request, res) => {
    // a little wait, so that both instances have sends in flight at once
    await new Promise((resolve) => setTimeout(resolve, 5))
    res.end('ok')
  })
  const fresh = await testDatabase(t)
  const env = { WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8' }
  const a = await startServer(t, fresh.url, env)
  const key = await a.waitForFirstKey()
  const b = await startServer(t, fresh.url, env)
  const servers = [a, b]

  const secrets = new Map<string, string>()
  for (let i = 0; i < CHANNELS; i++) {
    const made = await send(servers[i % 2] as Server, key, 'POST', '/v1/user/channels', {
      type: 'webhook',
      config: { url: `${receiver.origin}/hook/${i}`, format: 'standard' },
    })
    assert.equal(made.status, 201, JSON.stringify(made.body))
    secrets.set(`/hook/${i}`, made.body.secret as string)
  }
  const channelIds = (await send(a, key, 'GET', '/v1/user/channels')).body as unknown as {
    id: string
  }[]
  const eventIds = new Set<string>()
  await Promise.all(
    Array.from({ length: TESTS_PER_CHANNEL }, async (_, round) => {
      for (const [i, channel] of channelIds.entries()) {
        const res = await send(
          servers[(i + round) % 2] as Server,
          key,
          'POST',
          `/v1/user/channels/${channel.id}/test`,
        )
        assert.equal(res.status, 202)
        eventIds.add(res.body.eventId as string)
      }
    }),
  )
  const total = CHANNELS * TESTS_PER_CHANNEL
  assert.equal(eventIds.size, total)

  const requests = await receiver.received(total)
  // every delivery settled: nothing is left to send twice
  const database = createDatabase(fresh.url, { poolSize: 1 })
  t.after(() => database.close())
  for (let i = 0; i < 600; i++) {
    const pending = await database.db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('state', '!=', 'delivered')
      .executeTakeFirstOrThrow()
    if (Number(pending.n) === 0) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const states = await database.db.selectFrom('deliveries').select(['state']).execute()
  assert.equal(states.length, total)
  assert.ok(states.every((s) => s.state === 'delivered'))
  const attempts = await database.db.selectFrom('delivery_attempts').select('id').execute()
  assert.equal(attempts.length, total, 'one attempt per delivery')

  assert.equal(receiver.requests.length, total, 'no webhook-id twice')
  const seen = new Set(requests.map((r) => r.headers['webhook-id']))
  assert.equal(seen.size, total)
  assert.deepEqual([...seen].sort(), [...eventIds].sort())
  for (const request of receiver.requests) {
    const secret = secrets.get(request.path)
    assert.ok(secret, request.path)
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>)
  }
  assert.ok(a.alive() && b.alive())
})
