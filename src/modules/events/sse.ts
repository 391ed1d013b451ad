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

/** What a stream writes to: the subset of `http.ServerResponse` it needs (fakes in tests). */
export interface SseSink {
  readonly writableLength: number
  readonly destroyed: boolean
  write(chunk: string): boolean
  end(): void
  destroy(): void
  once(event: 'close', listener: () => void): unknown
}

/** Headers of an event stream; `no-transform` and `x-accel-buffering` keep proxies from buffering. */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const

/** One SSE frame. Data is split on line breaks, so no payload can inject a field. */
export function sseFrame(event: string, id: number, data: string): string {
  const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}`)
  return `event: ${event}\nid: ${id}\n${lines.join('\n')}\n\n`
}

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
    sink.once('close', () => this.#finish('disconnected'))
  }

  /** Advertises the reconnection delay and starts the heartbeat. */
  start(): void {
    this.#write(`retry: ${this.#options.retryMs}\n\n`)
    this.#heartbeat = setInterval(() => this.#write(': ping\n\n'), this.#options.heartbeatMs)
    // note: a heartbeat never keeps the process alive on its own
    this.#heartbeat.unref()
  }

  get closed(): boolean {
    return this.#closed
  }

  /** Sends an event; false when the stream is closed or was just dropped for overflow. */
  send(event: string, id: number, data: string): boolean {
    return this.#write(sseFrame(event, id, data))
  }

  /** Ends the stream politely (the client may reconnect). */
  close(): void {
    if (this.#closed) return
    this.#finish('closed')
    this.#sink.end()
  }

  onClose(listener: () => void): void {
    if (this.#closed) listener()
    else this.#closeListeners.add(listener)
  }

  #write(chunk: string): boolean {
    if (this.#closed || this.#sink.destroyed) return false
    if (this.#sink.writableLength + Buffer.byteLength(chunk) > this.#options.maxBufferedBytes) {
      // the client is not reading: drop it rather than buffer without bound
      this.#finish('overflow')
      this.#sink.destroy()
      return false
    }
    this.#sink.write(chunk)
    return true
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
