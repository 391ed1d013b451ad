import type { ServerResponse } from 'node:http'

/** Server-Sent Events tuning (AppDeps.sse); tests shorten the heartbeat. */
export interface SseOptions {
  /** A comment line this often keeps proxies and load balancers from closing idle streams. */
  heartbeatMs: number
  /**
   * Bytes a client may have waiting in its socket buffer. A slow or vanished client that
   * falls this far behind is dropped (it reconnects with Last-Event-ID and catches up).
   */
  maxBufferedBytes: number
  /** Reconnection delay suggested to clients (the `retry:` field). */
  retryMs: number
}

export const DEFAULT_SSE_OPTIONS: SseOptions = {
  heartbeatMs: 15_000,
  maxBufferedBytes: 64 * 1024,
  retryMs: 3_000,
}

const CRLF = '\r\n'

/**
 * One frame of an event stream, encoded once and written as it is to every client that gets
 * it: a change seen by 10 000 clients is one string, one Buffer and 10 000 socket writes.
 * The bytes are stored as an HTTP/1.1 chunk (`<size>\r\n<frame>\r\n`), so a chunked
 * response can take them without the per-write framing `res.write()` would add.
 */
export class SseFrame {
  /** The frame as one HTTP/1.1 chunk. */
  readonly chunk: Buffer
  /** The frame itself (a view into `chunk`, not a copy). */
  readonly bytes: Buffer

  constructor(text: string) {
    const size = Buffer.byteLength(text)
    const head = `${size.toString(16)}${CRLF}`
    this.chunk = Buffer.from(`${head}${text}${CRLF}`, 'utf8')
    this.bytes = this.chunk.subarray(head.length, head.length + size)
  }

  /** The frame as text (for tests and logs). */
  toString(): string {
    return this.bytes.toString('utf8')
  }
}

/** One SSE frame. Data is split on line breaks, so no payload can inject a field. */
export function sseFrame(event: string, id: number, data: string): string {
  const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}`)
  return `event: ${event}\nid: ${id}\n${lines.join('\n')}\n\n`
}

/** An event, encoded once for every client that gets it. */
export const encodeEvent = (event: string, id: number, data: string): SseFrame =>
  new SseFrame(sseFrame(event, id, data))

/** The heartbeat: a comment line, the same bytes for every client. */
export const PING_FRAME = new SseFrame(': ping\n\n')

/** Where a stream's frames go (`responseSink()` for a real response; fakes in tests). */
export interface SseSink {
  /** Bytes written and not yet taken by the client's socket. */
  readonly writableLength: number
  readonly destroyed: boolean
  write(frame: SseFrame): void
  /** Ends the response; with `closeConnection`, its connection too, once the end is sent. */
  end(closeConnection?: boolean): void
  destroy(): void
  once(event: 'close', listener: () => void): unknown
}

/**
 * A sink on an HTTP response. It sends the head at once, then writes every frame straight
 * to the socket as one pre-built chunk: one `write` per frame and client.
 *
 * note: `res.write()` would frame each write again (size line, data, CRLF: four writes), cork
 * the socket and uncork it in a `process.nextTick`, and copy the string into a new buffer,
 * for every client; with many clients that was most of a change's delivery time. The socket
 * path is taken only when the response is chunked and owns its socket; otherwise (HTTP/1.0,
 * HEAD, a response still queued behind another on its connection) `res.write()` frames it.
 * `res.end()` still writes the terminating chunk, and `res.writableLength` counts the
 * socket's buffer, so the memory bound sees every byte either way.
 */
export class ResponseSink implements SseSink {
  readonly #res: ServerResponse

  constructor(res: ServerResponse) {
    this.#res = res
    res.flushHeaders()
  }

  get writableLength(): number {
    return this.#res.writableLength
  }

  get destroyed(): boolean {
    return this.#res.destroyed
  }

  write(frame: SseFrame): void {
    const res = this.#res
    const socket = res.socket
    if (socket !== null && res.chunkedEncoding && !res.writableEnded) socket.write(frame.chunk)
    else res.write(frame.bytes)
  }

  end(closeConnection = false): void {
    const socket = this.#res.socket
    this.#res.end()
    // note: the head said keep-alive; ended after the response's last chunk, the connection
    // cannot be used again for another request (a proxy's reused connection to a server that
    // is going away would get that request refused)
    if (closeConnection) socket?.end()
  }

  destroy(): void {
    this.#res.destroy()
  }

  once(event: 'close', listener: () => void): unknown {
    return this.#res.once(event, listener)
  }
}

/** Headers of an event stream; `no-transform` and `x-accel-buffering` keep proxies from buffering. */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const

/** Parses a `Last-Event-ID` header: a change number, or null when absent or not a number. */
export function parseLastEventId(header: string | string[] | undefined): number | null {
  const text = Array.isArray(header) ? header[0] : header
  if (text === undefined) return null
  const trimmed = text.trim()
  return /^\d{1,15}$/.test(trimmed) ? Number(trimmed) : null
}

/**
 * One client's event stream: frames, heartbeats, and the memory bound. Every write checks
 * the client's buffered bytes first; over the bound the connection is dropped at once, so a
 * client that does not read can neither hold memory nor slow anyone else down.
 */
export class SseStream {
  readonly #sink: SseSink
  readonly #options: SseOptions
  readonly #closeListeners = new Set<() => void>()
  #heartbeat: NodeJS.Timeout | undefined
  #closed = false
  /** Why the stream ended, for logs and tests. */
  endReason: 'closed' | 'overflow' | 'disconnected' | null = null

  constructor(sink: SseSink, options: SseOptions) {
    this.#sink = sink
    this.#options = options
    // note: a response whose client left already (while access was checked) has emitted its
    // 'close': waiting for it would keep the stream, its timer and its feed for good
    if (sink.destroyed) this.#finish('disconnected')
    else sink.once('close', () => this.#finish('disconnected'))
  }

  /** Advertises the reconnection delay and starts the heartbeat. */
  start(): void {
    this.send(new SseFrame(`retry: ${this.#options.retryMs}\n\n`))
    this.#heartbeat = setInterval(() => this.send(PING_FRAME), this.#options.heartbeatMs)
    // note: a heartbeat never keeps the process alive on its own
    this.#heartbeat.unref()
  }

  get closed(): boolean {
    return this.#closed
  }

  /**
   * Writes a frame (shared with every other client that gets it); false when the stream is
   * closed or was just dropped for overflow.
   */
  send(frame: SseFrame): boolean {
    if (this.#closed) return false
    if (this.#sink.destroyed) {
      this.#finish('disconnected')
      return false
    }
    if (this.#sink.writableLength + frame.bytes.length > this.#options.maxBufferedBytes) {
      // the client is not reading: drop it rather than buffer without bound
      this.#finish('overflow')
      this.#sink.destroy()
      return false
    }
    this.#sink.write(frame)
    return true
  }

  /**
   * Ends the stream politely (the client may reconnect). With `reconnectMs` (at shutdown), the
   * client is first told to reconnect after that long rather than the usual `retryMs` (the
   * `retry:` field), and the connection ends with the stream: the client comes back at once,
   * through a new connection, which a load balancer sends to another instance.
   */
  close(reconnectMs?: number): void {
    if (this.#closed) return
    if (reconnectMs !== undefined) this.send(new SseFrame(`retry: ${reconnectMs}\n\n`))
    if (this.#closed) return
    this.#finish('closed')
    this.#sink.end(reconnectMs !== undefined)
  }

  onClose(listener: () => void): void {
    if (this.#closed) listener()
    else this.#closeListeners.add(listener)
  }

  #finish(reason: 'closed' | 'overflow' | 'disconnected'): void {
    if (this.#closed) return
    this.#closed = true
    this.endReason = reason
    clearInterval(this.#heartbeat)
    for (const listener of this.#closeListeners) listener()
    this.#closeListeners.clear()
  }
}
