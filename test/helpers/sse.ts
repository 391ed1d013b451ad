import { type ClientRequest, type IncomingMessage, request } from 'node:http'

/** One parsed item of an event stream: an event, or a comment line (heartbeat). */
export type SseItem =
  | { type: 'event'; event: string; id: string | undefined; data: string }
  | { type: 'comment'; text: string }

// note: a bound for waiting, not a timing assertion: a broken stream fails instead of hanging
const WAIT_MS = 10_000

/**
 * A minimal Server-Sent Events client over a real socket (node:http), for tests: it parses
 * the stream as it arrives and hands out items in order.
 */
export class SseTestClient {
  readonly response: IncomingMessage
  readonly #request: ClientRequest
  readonly #items: SseItem[] = []
  readonly #waiters: (() => void)[] = []
  #buffer = ''
  #ended = false
  readonly ended: Promise<void>

  private constructor(req: ClientRequest, res: IncomingMessage) {
    this.#request = req
    this.response = res
    res.setEncoding('utf8')
    res.on('data', (chunk: string) => {
      this.#buffer += chunk
      this.#parse()
    })
    this.ended = new Promise((resolve) => {
      const done = () => {
        this.#ended = true
        this.#wake()
        resolve()
      }
      res.once('end', done)
      res.once('close', done)
      res.once('error', done)
    })
  }

  /**
   * Opens a stream; resolves once the response head arrives (whatever its status).
   * `localAddress` connects from another loopback address (127.0.0.2, …): another client.
   */
  static connect(
    url: string,
    headers: Record<string, string> = {},
    { localAddress }: { localAddress?: string } = {},
  ): Promise<SseTestClient> {
    return new Promise((resolve, reject) => {
      const req = request(url, {
        headers: { accept: 'text/event-stream', ...headers },
        ...(localAddress !== undefined && { localAddress }),
      })
      req.once('response', (res) => resolve(new SseTestClient(req, res)))
      req.once('error', reject)
      req.end()
    })
  }

  get status(): number | undefined {
    return this.response.statusCode
  }

  #parse(): void {
    for (;;) {
      const end = this.#buffer.indexOf('\n\n')
      if (end < 0) break
      const block = this.#buffer.slice(0, end)
      this.#buffer = this.#buffer.slice(end + 2)
      let event = 'message'
      let id: string | undefined
      const data: string[] = []
      let isEvent = false
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.#items.push({ type: 'comment', text: line.slice(1).trim() })
        else if (line.startsWith('event: ')) {
          event = line.slice(7)
          isEvent = true
        } else if (line.startsWith('id: ')) id = line.slice(4)
        else if (line.startsWith('data: ')) {
          data.push(line.slice(6))
          isEvent = true
        }
      }
      if (isEvent) this.#items.push({ type: 'event', event, id, data: data.join('\n') })
    }
    this.#wake()
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter()
  }

  /** The next item matching `accept` (items before it are consumed). Rejects on end or after WAIT_MS. */
  async next<T extends SseItem>(accept: (item: SseItem) => item is T): Promise<T> {
    const deadline = Date.now() + WAIT_MS
    for (;;) {
      while (this.#items.length > 0) {
        const item = this.#items.shift() as SseItem
        if (accept(item)) return item
      }
      if (this.#ended) throw new Error('the stream ended')
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no matching item within ${WAIT_MS} ms`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.#waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  /** The next event (comments skipped). */
  nextEvent(): Promise<Extract<SseItem, { type: 'event' }>> {
    return this.next((i): i is Extract<SseItem, { type: 'event' }> => i.type === 'event')
  }

  /** The next comment line (a heartbeat). */
  nextComment(): Promise<Extract<SseItem, { type: 'comment' }>> {
    return this.next((i): i is Extract<SseItem, { type: 'comment' }> => i.type === 'comment')
  }

  /** Events received and not yet consumed (comments skipped). */
  pendingEvents(): Extract<SseItem, { type: 'event' }>[] {
    return this.#items.filter((i): i is Extract<SseItem, { type: 'event' }> => i.type === 'event')
  }

  /** Reads the whole body of a non-stream answer (an error). */
  async text(): Promise<string> {
    await this.ended
    return this.#buffer
  }

  /** Vanishes like a client that closes its tab: the socket is destroyed. */
  close(): void {
    this.#request.destroy()
  }
}

/** Waits until `condition` holds (polling), or fails after `limitMs` (a bound, not a timing). */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  limitMs = WAIT_MS,
): Promise<void> {
  const deadline = Date.now() + limitMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
