import assert from 'node:assert/strict'
import net, { type AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { InProcessEventBus } from '../../src/lib/event-bus.ts'
import { SHUTDOWN_RECONNECT_SPREAD_MS } from '../../src/modules/events/live-updates.plugin.ts'
import {
  STATUS_CHANGES,
  type StatusChange,
  type StatusEventBus,
} from '../../src/modules/statuses/status-events.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { createStatus, grant, makeCast } from '../helpers/sharing.ts'
import { type SseItem, SseTestClient, waitUntil } from '../helpers/sse.ts'

/** An app listening on 127.0.0.1 (a random port), with a bus the test can inspect. */
async function liveApp(ctx: Lifetime): Promise<{
  t: TestApp
  bus: InProcessEventBus<StatusChange>
  base: string
}> {
  const bus = new InProcessEventBus(STATUS_CHANGES)
  const t = await makeApp(ctx, { deps: { events: bus, sse: { heartbeatMs: 50 } } })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = t.app.server.address() as AddressInfo
  return { t, bus, base: `http://127.0.0.1:${port}` }
}

const statusEvent = (e: { event: string; id: string | undefined; data: string }) => {
  assert.equal(e.event, 'status')
  return { id: Number(e.id), body: JSON.parse(e.data) }
}

describe('Server-Sent Events over a real socket', () => {
  it('GET /v1/status/:statusId/events: current state, one event per write, Last-Event-ID resume, cleanup', async (ctx) => {
    const { t, bus, base } = await liveApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'room-4', { value: 'FREE' })
    const url = `${base}/v1/status/${s.id}/events`
    const auth = { 'service-api-key': owner.key }

    const first = await SseTestClient.connect(url, auth)
    assert.equal(first.status, 200)
    assert.match(String(first.response.headers['content-type']), /^text\/event-stream/)
    // per-user data, as every keyed /v1 response: never stored, sniffed or framed, though
    // the stream is written past Fastify's onSend hooks
    const headers = first.response.headers
    assert.equal(headers['cache-control'], 'no-store, no-transform')
    assert.equal(headers['x-content-type-options'], 'nosniff')
    assert.match(String(headers['content-security-policy']), /frame-ancestors 'none'/)
    assert.equal(headers['referrer-policy'], 'no-referrer')
    let e = statusEvent(await first.nextEvent())
    assert.deepEqual([e.id, e.body.value, e.body.id], [1, 'FREE', s.id], 'the current state first')
    assert.equal(e.body.statusKey, 'room-4', 'the authenticated stream carries the Status JSON')

    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    e = statusEvent(await first.nextEvent())
    assert.deepEqual([e.id, e.body.value, e.body.changeCount], [2, 'BUSY', 2])

    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { colorNo: 4 })
    e = statusEvent(await first.nextEvent())
    assert.deepEqual(
      [e.id, e.body.colorNo, e.body.changeCount],
      [3, 4, 2],
      'a setting change is an event too, and moves the id',
    )

    // a vanished client: its socket goes, and so does everything the server kept for it
    first.close()
    await waitUntil(() => bus.listenerCount(s.id) === 0, 'the stream is cleaned up')

    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'FREE' }) // version 4, unseen
    const behind = await SseTestClient.connect(url, { ...auth, 'last-event-id': '3' })
    e = statusEvent(await behind.nextEvent())
    assert.deepEqual(
      [e.id, e.body.value, e.body.colorNo],
      [4, 'FREE', 4],
      'behind: the current state',
    )

    const upToDate = await SseTestClient.connect(url, { ...auth, 'last-event-id': '4' })
    const firstItem = await upToDate.next((i): i is SseItem => true)
    assert.equal(firstItem.type, 'comment', 'a heartbeat first: no state was re-sent')
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    e = statusEvent(await upToDate.nextEvent())
    assert.equal(e.id, 5, 'up to date: nothing is re-sent, the next change comes')
    assert.equal(statusEvent(await behind.nextEvent()).id, 5)

    // a delete ends every stream, with a last event saying why
    await t.request(owner, 'DELETE', `/v1/status/${s.id}`)
    for (const client of [behind, upToDate]) {
      const last = await client.nextEvent()
      assert.equal(last.event, 'unavailable')
      assert.equal(last.id, '6')
      assert.deepEqual(JSON.parse(last.data), { reason: 'deleted' })
      await client.ended
    }
    await waitUntil(() => bus.listenerCount(s.id) === 0, 'the deleted status has no listeners')
  })

  it('ids only grow: a burst of concurrent writes arrives in order, ending at the last version', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'counter', { value: 'v0' })
    const client = await SseTestClient.connect(`${base}/v1/status/${s.id}/events`, {
      'service-api-key': owner.key,
    })
    assert.equal(statusEvent(await client.nextEvent()).id, 1)
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: `v${i + 1}` }),
      ),
    )
    const ids: number[] = []
    for (;;) {
      const { id, body } = statusEvent(await client.nextEvent())
      ids.push(id)
      if (id === 21) {
        assert.equal(body.changeCount, 21)
        break
      }
    }
    for (let i = 1; i < ids.length; i++)
      assert.ok((ids[i - 1] as number) < (ids[i] as number), `increasing: ${ids}`)
    client.close()
  })

  it('a value equal to the stored one is an update: subscribers are told; a replayed request tells no one', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    const { owner, subscriber } = await makeCast(t)
    const s = await createStatus(t, owner, 'same-value', { value: 'ON' })
    await grant(t, owner, s.id, subscriber, 'subscriber')
    const client = await SseTestClient.connect(`${base}/v1/status/${s.id}/events`, {
      'service-api-key': subscriber.key,
    })
    const first = statusEvent(await client.nextEvent())
    assert.equal(first.body.value, 'ON')
    const retried = { 'idempotency-key': 'same-value-1' }
    const sent = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'ON' }, retried)
    assert.equal(sent.statusCode, 200)
    const same = statusEvent(await client.nextEvent())
    assert.deepEqual(
      [same.id, same.body.value, same.body.changeCount],
      [first.id + 1, 'ON', first.body.changeCount + 1],
      'the same value again is an event',
    )
    const replay = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'ON' }, retried)
    assert.equal(replay.headers['idempotent-replayed'], 'true')
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'OFF' })
    const next = statusEvent(await client.nextEvent())
    assert.deepEqual(
      [next.id, next.body.value, next.body.changeCount],
      [same.id + 1, 'OFF', same.body.changeCount + 1],
      'the replay wrote nothing and sent nothing: the next event is the next write',
    )
    client.close()
  })

  it('visibility as GET status: 401 without a key, 404 for a stranger on a private status', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    const { owner, stranger } = await makeCast(t)
    const s = await createStatus(t, owner, 'secret', { value: 'X' })
    const anonymous = await SseTestClient.connect(`${base}/v1/status/${s.id}/events`)
    assert.equal(anonymous.status, 401)
    assert.equal(JSON.parse(await anonymous.text()).errorCode, 'unauthorized')
    const theirs = await SseTestClient.connect(`${base}/v1/status/${s.id}/events`, {
      'service-api-key': stranger.key,
    })
    assert.equal(theirs.status, 404)
    assert.equal(JSON.parse(await theirs.text()).errorCode, 'notFound')
  })

  it('a revoked role ends the stream of a private status (event: unavailable, notVisible)', async (ctx) => {
    const { t, bus, base } = await liveApp(ctx)
    const { owner, updater } = await makeCast(t)
    const s = await createStatus(t, owner, 'secret', { value: 'X' })
    await grant(t, owner, s.id, updater, 'updater')
    const client = await SseTestClient.connect(`${base}/v1/status/${s.id}/events`, {
      'service-api-key': updater.key,
    })
    assert.equal(statusEvent(await client.nextEvent()).body.value, 'X')
    await t.request(owner, 'DELETE', `/v1/status/${s.id}/users/${updater.id}`)
    const last = await client.nextEvent()
    assert.equal(last.event, 'unavailable')
    assert.deepEqual(JSON.parse(last.data), { reason: 'notVisible' })
    await client.ended
    await waitUntil(() => bus.listenerCount(s.id) === 0, 'the stream is cleaned up')
  })

  it('a revoked key is refused: a stream opened with it ends at once when revoked through this instance (event: unavailable, unauthorized)', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'revoked-stream', { value: 'ON' })
    const made = (await t.request(owner, 'POST', '/v1/user/api-keys', {})).json()
    const url = `${base}/v1/status/${s.id}/events`
    const doomed = await SseTestClient.connect(url, { 'service-api-key': made.key })
    const kept = await SseTestClient.connect(url, { 'service-api-key': owner.key })
    const first = statusEvent(await doomed.nextEvent())
    statusEvent(await kept.nextEvent())
    const revoked = await t.request(owner, 'DELETE', `/v1/user/api-keys/${made.id}`)
    assert.equal(revoked.statusCode, 204)
    const end = await doomed.nextEvent()
    assert.equal(end.event, 'unavailable')
    assert.deepEqual(JSON.parse(end.data), { reason: 'unauthorized' })
    assert.equal(end.id, undefined, 'no id: the client keeps the version it had')
    await doomed.ended
    // the user's other key keeps its stream
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'OFF' })
    const e = statusEvent(await kept.nextEvent())
    assert.deepEqual([e.id, e.body.value], [first.id + 1, 'OFF'])
    kept.close()
  })

  it('a key revoked or expired elsewhere, or a user no longer verified, ends the streams within AUTH_CACHE_SECONDS', async (ctx) => {
    const bus = new InProcessEventBus(STATUS_CHANGES)
    const t = await makeApp(ctx, {
      deps: { events: bus, sse: { heartbeatMs: 50 }, keyCacheTtlMs: 1_000 },
    })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const { owner, subscriber } = await makeCast(t)
    const s = await createStatus(t, owner, 'elsewhere', { value: 'ON', accessType: 'public' })
    const url = `${base}/v1/status/${s.id}/events`
    const keys = [
      (await t.request(owner, 'POST', '/v1/user/api-keys', {})).json(),
      (await t.request(owner, 'POST', '/v1/user/api-keys', {})).json(),
    ]
    const revokedElsewhere = await SseTestClient.connect(url, { 'service-api-key': keys[0].key })
    const expired = await SseTestClient.connect(url, { 'service-api-key': keys[1].key })
    const unverified = await SseTestClient.connect(url, { 'service-api-key': subscriber.key })
    for (const client of [revokedElsewhere, expired, unverified]) await client.nextEvent()
    // as the CLI or another instance would: straight in the database, this instance unaware
    const db = t.database.db
    await sql`update api_keys set revoked_at = ${new Date().toISOString()} where id = ${keys[0].id}`.execute(
      db,
    )
    await sql`update api_keys set expires_at = ${new Date().toISOString()} where id = ${keys[1].id}`.execute(
      db,
    )
    await sql`update users set verified = 0 where id = ${subscriber.id}`.execute(db)
    for (const [client, reason] of [
      [revokedElsewhere, 'unauthorized'],
      [expired, 'unauthorized'],
      [unverified, 'notVerified'],
    ] as const) {
      const end = await client.nextEvent()
      assert.equal(end.event, 'unavailable')
      assert.deepEqual(JSON.parse(end.data), { reason })
      await client.ended
    }
  })

  it('a stream counts against the rate limit and says so in its headers', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const s = await createStatus(t, owner, 'room-5', { value: 'FREE' })
    const client = await SseTestClient.connect(`${base}/v1/status/${s.id}/events`, {
      'service-api-key': owner.key,
    })
    assert.equal(client.status, 200)
    const limit = Number(client.response.headers['x-ratelimit-limit'])
    assert.ok(limit > 0, 'x-ratelimit-limit')
    assert.equal(Number(client.response.headers['x-ratelimit-remaining']), limit - 2)
    client.close()
  })

  it('GET /v1/share/:shareId/events: anonymous, the share view, ends when made private', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'build', {
      value: 'PASSING',
      accessType: 'public',
      description: 'See https://ci.example.com now',
    })
    const client = await SseTestClient.connect(`${base}/v1/share/${s.shareId}/events`)
    assert.equal(client.status, 200)
    assert.equal(client.response.headers['access-control-allow-origin'], '*')
    let e = statusEvent(await client.nextEvent())
    assert.equal(e.body.value, 'PASSING')
    assert.equal(e.body.shareId, s.shareId)
    assert.equal(e.body.id, undefined, 'the share view leaves the status id out')
    assert.equal(e.body.statusKey, undefined, "and the owner's key")
    assert.deepEqual(e.body.descriptionParts, [
      { text: 'See ' },
      { text: 'https://ci.example.com', href: 'https://ci.example.com' },
      { text: ' now' },
    ])

    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'FAILING' })
    e = statusEvent(await client.nextEvent())
    assert.deepEqual([e.id, e.body.value], [2, 'FAILING'])

    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'private' })
    const last = await client.nextEvent()
    assert.equal(last.event, 'unavailable')
    assert.deepEqual(JSON.parse(last.data), { reason: 'notVisible' })
    await client.ended

    const again = await SseTestClient.connect(`${base}/v1/share/${s.shareId}/events`)
    assert.equal(again.status, 404, 'a private status has no public stream')
    // the refusal carries the public view's headers, as the other /v1/share routes' do
    assert.equal(again.response.headers['access-control-allow-origin'], '*')
    assert.equal(again.response.headers['cache-control'], 'no-cache')
    assert.equal(JSON.parse(await again.text()).errorCode, 'notFound')
  })

  it('after a gap in delivery (a bus resync), streams catch up with the current state', async (ctx) => {
    // a bus that loses changes, like a LISTEN connection that dropped for a while
    class LossyBus implements StatusEventBus {
      readonly inner = new InProcessEventBus(STATUS_CHANGES)
      losing = false
      resync: (() => void) | undefined
      async publish(change: StatusChange) {
        if (!this.losing) await this.inner.publish(change)
      }
      subscribe(statusId: string, listener: (change: StatusChange) => void) {
        return this.inner.subscribe(statusId, listener)
      }
      onResync(listener: () => void) {
        this.resync = listener
      }
      close() {
        return this.inner.close()
      }
    }
    const bus = new LossyBus()
    // note: on PostgreSQL the outbox would bring the lost changes within its interval
    // (test/multi/live-relay.test.ts); this test is about the resync alone
    const t = await makeApp(ctx, { deps: { events: bus, liveRelayIntervalMs: 3_600_000 } })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as AddressInfo
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'lamp', { value: 'ON', accessType: 'public' })
    const client = await SseTestClient.connect(
      `http://127.0.0.1:${port}/v1/share/${s.shareId}/events`,
    )
    assert.equal(statusEvent(await client.nextEvent()).id, 1)
    bus.losing = true
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'OFF' })
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'DIM' })
    bus.losing = false
    bus.resync?.()
    const e = statusEvent(await client.nextEvent())
    assert.deepEqual([e.id, e.body.value], [3, 'DIM'])
    client.close()
  })

  it('HEAD works on every GET endpoint: an event stream answers its head and ends, freeing the connection', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'lamp', { value: 'ON', accessType: 'public' })
    const { port } = new URL(base)
    for (const [path, key] of [
      [`/v1/share/${s.shareId}/events`, ''],
      [`/v1/status/${s.id}/events`, `service-api-key: ${owner.key}\r\n`],
    ]) {
      // a HEAD, then a GET on the same keep-alive connection: both are answered
      const socket = net.connect(Number(port), '127.0.0.1')
      let received = ''
      socket.on('data', (d) => {
        received += d.toString('latin1')
      })
      socket.write(`HEAD ${path} HTTP/1.1\r\nHost: x\r\n${key}\r\n`)
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
      await waitUntil(() => /\r\n\r\n\{"status":"ok"[,}]/.test(received), `${path}: ${received}`)
      socket.destroy()
      const [head] = received.split('\r\n\r\n')
      assert.match(head ?? '', /^HTTP\/1\.1 200/, path)
      assert.match(head ?? '', /content-type: text\/event-stream/i, path)
      assert.doesNotMatch(received, /event: status/, `${path}: no body for HEAD`)
    }
  })

  it('app.close() ends open streams, so a graceful shutdown does not hang', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'lamp', { value: 'ON', accessType: 'public' })
    const client = await SseTestClient.connect(`${base}/v1/share/${s.shareId}/events`)
    await client.nextEvent()
    await t.close()
    await client.ended
  })

  // docs/operations.md#shutdown: behind a load balancer, the client comes back at once and
  // lands on another instance
  it('at shutdown the server stops accepting first, then ends each stream and its connection, telling its client to reconnect within a second', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'lamp', { value: 'ON', accessType: 'public' })
    // whether the server still accepted connections when a stream's last chunk was written:
    // a client reconnecting then must be refused (a load balancer tries another instance),
    // not accepted and answered 503
    let listeningAtEnd: boolean | undefined
    // and whether its connection ended with it (no proxy can send another request on it)
    let connectionEnded: boolean | undefined
    t.app.server.on('connection', (socket: net.Socket) => {
      const write = socket.write.bind(socket) as (...args: unknown[]) => boolean
      socket.write = ((chunk: unknown, ...rest: unknown[]) => {
        if (String(chunk).endsWith('0\r\n\r\n') && listeningAtEnd === undefined) {
          listeningAtEnd = t.app.server.listening
          process.nextTick(() => {
            connectionEnded = socket.writableEnded
          })
        }
        return write(chunk, ...rest)
      }) as typeof socket.write
    })
    const client = await SseTestClient.connect(`${base}/v1/share/${s.shareId}/events`)
    await client.nextEvent()
    let tail = ''
    client.response.on('data', (chunk: string) => {
      tail += chunk
    })
    await t.close()
    await client.ended
    assert.equal(listeningAtEnd, false, 'no longer listening when the stream ended')
    assert.equal(connectionEnded, true, 'the connection ends with the stream')
    const retry = /retry: (\d+)\n\n$/.exec(tail)
    assert.ok(retry, `the stream's last frame is a retry: field, got ${JSON.stringify(tail)}`)
    assert.ok(Number(retry[1]) < SHUTDOWN_RECONNECT_SPREAD_MS, `within a second: ${retry[1]} ms`)
  })
})
