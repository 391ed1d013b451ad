import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { describe, it } from 'node:test'
import { InProcessEventBus } from '../../src/lib/event-bus.ts'
import {
  encodeEvent,
  parseLastEventId,
  type SseFrame,
  type SseSink,
  SseStream,
  sseFrame,
} from '../../src/lib/sse.ts'
import { STATUS_CHANGES, type StatusChange } from '../../src/modules/statuses/status-events.ts'

/** A response that never drains: what a client that stopped reading looks like to us. */
class StuckSink extends EventEmitter implements SseSink {
  writableLength = 0
  destroyed = false
  ended = false
  written: string[] = []
  write(frame: SseFrame): void {
    this.written.push(frame.toString())
    this.writableLength += frame.bytes.length
  }
  end(): void {
    this.ended = true
  }
  destroy(): void {
    this.destroyed = true
    this.emit('close')
  }
}

const OPTIONS = { heartbeatMs: 60_000, maxBufferedBytes: 1_000, retryMs: 3_000 }

describe('SseStream', () => {
  it('frames events; a payload with line breaks cannot inject fields', () => {
    assert.equal(sseFrame('status', 7, '{"a":1}'), 'event: status\nid: 7\ndata: {"a":1}\n\n')
    assert.equal(
      sseFrame('status', 8, 'x\n\nevent: evil\r\ny'),
      'event: status\nid: 8\ndata: x\ndata: \ndata: event: evil\ndata: y\n\n',
    )
  })

  it('drops a client that stops reading once its buffer passes the bound, and frees it', () => {
    const sink = new StuckSink()
    const stream = new SseStream(sink, OPTIONS)
    let closed = 0
    stream.onClose(() => closed++)
    stream.start()
    const payload = 'x'.repeat(200)
    let sent = 0
    while (stream.send(encodeEvent('status', sent + 1, payload))) sent++
    assert.ok(sent >= 3 && sent <= 5, `about 1000 bytes were buffered (${sent} events)`)
    assert.ok(sink.writableLength <= OPTIONS.maxBufferedBytes, 'never past the bound')
    assert.equal(sink.destroyed, true, 'the connection is dropped, not kept')
    assert.equal(stream.endReason, 'overflow')
    assert.equal(closed, 1, 'close listeners run once (the feed forgets the client)')
    assert.equal(stream.send(encodeEvent('status', 99, payload)), false, 'nothing is written after')
  })

  it('a client that disconnects ends the stream and stops its heartbeat', (t) => {
    // the heartbeat's timer runs on a clock the test moves
    t.mock.timers.enable({ apis: ['setInterval'] })
    const sink = new StuckSink()
    const stream = new SseStream(sink, { ...OPTIONS, heartbeatMs: 5, maxBufferedBytes: 1e6 })
    stream.start()
    const pings = () => sink.written.filter((w) => w === ': ping\n\n').length
    t.mock.timers.tick(4)
    assert.equal(pings(), 0)
    t.mock.timers.tick(1)
    assert.equal(pings(), 1, 'a heartbeat every 5 ms')
    sink.emit('close')
    assert.equal(stream.closed, true)
    assert.equal(stream.endReason, 'disconnected')
    const count = sink.written.length
    t.mock.timers.tick(50)
    assert.equal(sink.written.length, count, 'no heartbeat after close')
  })

  it('a client that left before its stream opened (during the access check) ends it at once', () => {
    const sink = new StuckSink()
    sink.destroy() // its 'close' is gone before the stream could listen for it
    const stream = new SseStream(sink, { ...OPTIONS, heartbeatMs: 5 })
    let closed = 0
    stream.onClose(() => closed++)
    assert.equal(stream.closed, true)
    assert.equal(stream.endReason, 'disconnected')
    assert.equal(closed, 1, 'the feed forgets it')
  })

  it('a sink destroyed without a close event ends the stream on the next write', () => {
    const sink = new StuckSink()
    const stream = new SseStream(sink, OPTIONS)
    let closed = 0
    stream.onClose(() => closed++)
    stream.start()
    sink.destroyed = true
    assert.equal(stream.send(encodeEvent('status', 1, '{}')), false)
    assert.equal(stream.closed, true)
    assert.equal(closed, 1)
  })

  it('parses Last-Event-ID: a change number or nothing', () => {
    assert.equal(parseLastEventId('42'), 42)
    assert.equal(parseLastEventId(' 7 '), 7)
    assert.equal(parseLastEventId(undefined), null)
    assert.equal(parseLastEventId('abc'), null)
    assert.equal(parseLastEventId('-1'), null)
    assert.equal(parseLastEventId('9'.repeat(40)), null)
  })
})

describe('InProcessEventBus', () => {
  const change = (statusId: string, version: number): StatusChange => ({
    statusId,
    version,
    kind: 'status',
  })

  it('delivers a change to the listeners of that status only', async () => {
    const bus = new InProcessEventBus(STATUS_CHANGES)
    const a: number[] = []
    const b: number[] = []
    bus.subscribe('a', (c) => a.push(c.version))
    bus.subscribe('b', (c) => b.push(c.version))
    await bus.publish(change('a', 1))
    await bus.publish(change('a', 2))
    assert.deepEqual(a, [1, 2])
    assert.deepEqual(b, [])
  })

  it('a throwing listener neither reaches the publisher nor stops the others', async () => {
    const errors: unknown[] = []
    const bus = new InProcessEventBus({
      ...STATUS_CHANGES,
      onListenerError: (err) => errors.push(err),
    })
    const got: number[] = []
    bus.subscribe('a', () => {
      throw new Error('boom')
    })
    bus.subscribe('a', (c) => got.push(c.version))
    await bus.publish(change('a', 1))
    assert.deepEqual(got, [1])
    assert.equal(errors.length, 1)
  })

  it('unsubscribing leaves nothing behind', async () => {
    const bus = new InProcessEventBus(STATUS_CHANGES)
    const off = bus.subscribe('a', () => {})
    assert.equal(bus.listenerCount('a'), 1)
    off()
    off()
    assert.equal(bus.listenerCount('a'), 0)
  })
})
