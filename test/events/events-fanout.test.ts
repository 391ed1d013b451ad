import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { describe, it } from 'node:test'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs } from 'kysely'
import { InProcessEventBus } from '../../src/lib/event-bus.ts'
import { encodeEvent, type SseFrame, type SseSink, SseStream, sseFrame } from '../../src/lib/sse.ts'
import { StatusFeeds, type Viewer } from '../../src/modules/events/status-feeds.ts'
import { STATUS_CHANGES } from '../../src/modules/statuses/status-events.ts'
import { makeApp, TEST_PLANS, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { createStatus, grant, makeCast } from '../helpers/sharing.ts'
import { SseTestClient, waitUntil } from '../helpers/sse.ts'

type Event = { event: string; id: number; data: Record<string, unknown> }

/** A sink that records the frames; `stuck` makes it a client that never reads. */
class RecordingSink extends EventEmitter implements SseSink {
  writableLength = 0
  destroyed = false
  ended = false
  readonly frames: string[] = []
  readonly stuck: boolean
  constructor(stuck = false) {
    super()
    this.stuck = stuck
  }
  write(frame: SseFrame): void {
    this.frames.push(frame.toString())
    if (this.stuck) this.writableLength += frame.bytes.length
  }
  end(): void {
    this.ended = true
    this.emit('close')
  }
  destroy(): void {
    this.destroyed = true
    this.emit('close')
  }
  /** The events received, parsed (comments and `retry:` skipped). */
  events(): Event[] {
    return this.frames
      .filter((f) => f.startsWith('event: '))
      .map((f) => {
        const [event, id, ...data] = f.trimEnd().split('\n')
        return {
          event: (event as string).slice(7),
          id: Number((id as string).slice(4)),
          data: JSON.parse(data.map((l) => l.slice(6)).join('\n')),
        }
      })
  }
}

const OPTIONS = { heartbeatMs: 60_000, maxBufferedBytes: 64 * 1024, retryMs: 3_000 }

/** Counts the queries run through a Kysely instance (the feeds only read), at their result. */
class ReadCounter implements KyselyPlugin {
  reads = 0
  transformQuery(args: PluginTransformQueryArgs) {
    return args.node
  }
  async transformResult(args: PluginTransformResultArgs) {
    this.reads++
    return args.result
  }
}

/** An app with a bus the test shares, and a second set of feeds on a counting connection. */
async function feedsApp(ctx: Lifetime) {
  const bus = new InProcessEventBus(STATUS_CHANGES)
  const t = await makeApp(ctx, { deps: { events: bus } })
  const counter = new ReadCounter()
  const feeds = new StatusFeeds({
    db: t.database.db.withPlugin(counter),
    plans: TEST_PLANS,
    events: bus,
    log: t.app.log,
  })
  /** Opens a stream on a fake sink and waits until it is attached (and served). */
  const attach = async (statusId: string, viewer: Viewer, sink = new RecordingSink()) => {
    const stream = new SseStream(sink, OPTIONS)
    stream.start()
    await feeds.attach(statusId, stream, viewer, null)
    return { sink, stream }
  }
  return { t, bus, counter, feeds, attach }
}

const patch = async (t: TestApp, user: TestUser, id: string, body: Record<string, unknown>) => {
  const res = await t.request(user, 'PATCH', `/v1/status/${id}`, body)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

describe('Fan-out: one status, many subscribers', () => {
  it('a change costs the same reads for 1 subscriber as for 40 (once per change, not per client)', async (ctx) => {
    const { t, counter, attach } = await feedsApp(ctx)
    const { owner, updater, subscriber } = await makeCast(t)
    const readsPerChange = async (
      accessType: 'public' | 'private',
      viewers: Viewer[],
    ): Promise<number> => {
      const s = await createStatus(t, owner, `s-${accessType}-${viewers.length}`, {
        value: 'a',
        accessType,
      })
      await grant(t, owner, s.id, updater, 'updater')
      await grant(t, owner, s.id, subscriber, 'subscriber')
      const sinks = await Promise.all(viewers.map(async (v) => (await attach(s.id, v)).sink))
      const before = counter.reads
      await patch(t, owner, s.id, { value: 'b' })
      await waitUntil(
        () => sinks.every((sink) => sink.events().some((e) => e.data.value === 'b')),
        'every subscriber has the change',
      )
      for (const sink of sinks)
        assert.deepEqual(
          sink.events().map((e) => e.id),
          [1, 2],
        )
      return counter.reads - before
    }
    const share: Viewer = { kind: 'share' }
    const user = (u: TestUser): Viewer => ({ kind: 'user', userId: u.id })
    const publicOne = await readsPerChange('public', [share])
    const publicMany = await readsPerChange('public', [
      ...Array.from({ length: 30 }, () => share),
      ...Array.from({ length: 10 }, () => user(updater)),
    ])
    assert.equal(publicOne, 2, 'the row, and the owner plan for the share view')
    assert.equal(publicMany, publicOne)
    const privateOne = await readsPerChange('private', [user(subscriber)])
    const privateMany = await readsPerChange(
      'private',
      [owner, updater, subscriber].flatMap((u) => Array.from({ length: 13 }, () => user(u))),
    )
    assert.equal(privateOne, 2, 'the row, and who holds a role')
    assert.equal(privateMany, privateOne)
  })

  it('a subscriber that stops reading is dropped at its bound; the others get every event', async (ctx) => {
    const { t, feeds, attach } = await feedsApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'busy', { value: 'v0', accessType: 'public' })
    const readers = await Promise.all(
      Array.from({ length: 20 }, async () => (await attach(s.id, { kind: 'share' })).sink),
    )
    const stuckSink = new RecordingSink(true)
    const slow = new SseStream(stuckSink, { ...OPTIONS, maxBufferedBytes: 2_000 })
    slow.start()
    await feeds.attach(s.id, slow, { kind: 'share' }, null)
    for (let i = 1; i <= 12; i++) {
      await patch(t, owner, s.id, { value: `v${i}` })
      await waitUntil(
        () => readers.every((r) => r.events().at(-1)?.id === i + 1),
        `every reader has version ${i + 1}`,
      )
    }
    const all = Array.from({ length: 13 }, (_, i) => i + 1)
    for (const r of readers)
      assert.deepEqual(
        r.events().map((e) => e.id),
        all,
      )
    assert.equal(slow.endReason, 'overflow')
    assert.equal(stuckSink.destroyed, true)
    assert.ok(stuckSink.writableLength <= 2_000, 'never buffered past its bound')
    assert.ok(stuckSink.events().length < all.length, 'it got only a prefix')
    assert.equal(feeds.clientCount(s.id), 20, 'the feed forgot it')
  })

  it('every subscriber gets exactly the events it may see, in the form its stream carries', async (ctx) => {
    const bus = new InProcessEventBus(STATUS_CHANGES)
    const t = await makeApp(ctx, { deps: { events: bus, sse: { heartbeatMs: 60_000 } } })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const { owner, updater, subscriber } = await makeCast(t)
    const s = await createStatus(t, owner, 'room', { value: 'FREE' })
    await grant(t, owner, s.id, updater, 'updater')
    await grant(t, owner, s.id, subscriber, 'subscriber')
    const open = async (url: string, user?: TestUser) => {
      const client = await SseTestClient.connect(
        `${base}${url}`,
        user ? { 'service-api-key': user.key } : {},
      )
      assert.equal(client.status, 200)
      return client
    }
    const next = async (client: SseTestClient) => {
      const e = await client.nextEvent()
      return { event: e.event, id: Number(e.id), data: JSON.parse(e.data) }
    }
    const users = { owner, updater, subscriber }
    const streams = Object.fromEntries(
      await Promise.all(
        Object.entries(users).map(async ([name, u]) => [
          name,
          [await open(`/v1/status/${s.id}/events`, u), await open(`/v1/status/${s.id}/events`, u)],
        ]),
      ),
    ) as Record<keyof typeof users, SseTestClient[]>
    const everyone = () => Object.values(streams).flat()
    for (const c of everyone()) assert.equal((await next(c)).data.value, 'FREE')

    await patch(t, updater, s.id, { value: 'BUSY' })
    for (const [name, clients] of Object.entries(streams))
      for (const c of clients) {
        const e = await next(c)
        // the status key is the owner's alone (docs/api.md#the-status-object)
        assert.deepEqual(
          [e.event, e.id, e.data.value, e.data.statusKey],
          ['status', 2, 'BUSY', name === 'owner' ? 'room' : null],
        )
      }

    // the subscriber loses its role: both its streams end; nobody else hears of it
    const revoked = await t.request(owner, 'DELETE', `/v1/status/${s.id}/users/${subscriber.id}`)
    assert.equal(revoked.statusCode, 204)
    for (const c of streams.subscriber) {
      const e = await next(c)
      assert.deepEqual([e.event, e.data], ['unavailable', { reason: 'notVisible' }])
      await c.ended
    }

    // made public: share viewers join; each kind of stream gets its own form of one change
    await patch(t, owner, s.id, { accessType: 'public' })
    const kept = [...streams.owner, ...streams.updater]
    for (const c of kept) assert.deepEqual((await next(c)).id, 3, 'no event for the revocation')
    const viewers = [
      await open(`/v1/share/${s.shareId}/events`),
      await open(`/v1/share/${s.shareId}/events`),
    ]
    for (const c of viewers) assert.equal((await next(c)).id, 3)
    await patch(t, updater, s.id, { value: 'FREE' })
    for (const c of kept) {
      const e = await next(c)
      assert.deepEqual([e.id, e.data.value, e.data.id], [4, 'FREE', s.id], 'the Status JSON')
    }
    for (const c of viewers) {
      const e = await next(c)
      assert.deepEqual(
        [e.id, e.data.value, e.data.id, e.data.statusKey],
        [4, 'FREE', undefined, undefined],
        'the share view',
      )
      assert.equal(e.data.shareId, s.shareId)
    }

    // private again: the share viewers are told and let go; the role holders go on
    await patch(t, owner, s.id, { accessType: 'private' })
    for (const c of viewers) {
      const e = await next(c)
      assert.deepEqual([e.event, e.id, e.data], ['unavailable', 5, { reason: 'notVisible' }])
      await c.ended
    }
    for (const c of kept) {
      const e = await next(c)
      assert.deepEqual([e.id, e.data.accessType], [5, 'private'])
      assert.deepEqual(c.pendingEvents(), [], 'exactly one event per change')
    }
    await waitUntil(() => bus.listenerCount(s.id) === 1, 'only the kept streams remain')
    for (const c of kept) c.close()
    await waitUntil(() => bus.listenerCount(s.id) === 0, 'every stream is cleaned up')
  })

  it('HTTP/1.0 gets the same frames without chunked framing; HEAD gets the head alone', async (ctx) => {
    const t = await makeApp(ctx, { deps: { sse: { heartbeatMs: 60_000 } } })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as AddressInfo
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'lamp', { value: 'ON', accessType: 'public' })
    const raw = (request: string) => {
      const socket = connect(port, '127.0.0.1')
      const client = { socket, received: '' }
      socket.setEncoding('latin1')
      socket.on('data', (chunk: string) => {
        client.received += chunk
      })
      socket.write(request)
      return client
    }
    const url = `/v1/share/${s.shareId}/events`
    const head = raw(`HEAD ${url} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`)
    const old = raw(`GET ${url} HTTP/1.0\r\n\r\n`)
    await waitUntil(() => old.received.includes('"value":"ON"'), 'the first event arrives')
    await waitUntil(() => head.received.endsWith('\r\n\r\n'), 'the head arrives')
    await patch(t, owner, s.id, { value: 'OFF' })
    await waitUntil(
      () => /\n\n$/.test(old.received) && old.received.includes('"value":"OFF"'),
      'the change arrives',
    )
    for (const c of [head, old]) c.socket.destroy()
    const [oldHead, body] = old.received.split('\r\n\r\n') as [string, string]
    assert.match(oldHead, /^HTTP\/1\.1 200/)
    assert.doesNotMatch(oldHead, /transfer-encoding/i)
    assert.ok(body.startsWith('retry: 3000\n\nevent: status\nid: 1\ndata: {'), body)
    assert.ok(body.includes('\n\nevent: status\nid: 2\ndata: {'), 'raw frames, no chunk sizes')
    assert.match(head.received, /^HTTP\/1\.1 200/)
    assert.equal(head.received.indexOf('\r\n\r\n'), head.received.length - 4, 'no body')
  })
})

describe('SseFrame', () => {
  it('is the frame as one HTTP/1.1 chunk, its size in bytes (not characters)', () => {
    const frame = encodeEvent('status', 3, '{"value":"Grüße ✓"}')
    const text = sseFrame('status', 3, '{"value":"Grüße ✓"}')
    assert.equal(frame.toString(), text)
    const size = Buffer.byteLength(text)
    assert.ok(size > text.length)
    assert.equal(frame.chunk.toString(), `${size.toString(16)}\r\n${text}\r\n`)
    assert.equal(frame.bytes.length, size)
  })
})
