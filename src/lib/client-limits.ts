/**
 * What one client may hold or ask for at once, so that no client can take the service down
 * (docs/operations.md#limits-per-client): open event streams per user or address
 * (`STREAMS_PER_CLIENT`), anonymous requests per address and minute (`ANON_REQUESTS_PER_MINUTE`).
 */
export interface ClientLimits {
  streamsPerClient: number
  anonRequestsPerMinute: number
}

export const DEFAULT_CLIENT_LIMITS: ClientLimits = {
  streamsPerClient: 64,
  anonRequestsPerMinute: 1200,
}

/** Why a stream place was refused: the client holds its cap, or the whole server its capacity. */
export type Refusal = 'client' | 'server'

/**
 * How many long-lived things (event streams) each client holds at once, capped per client
 * key (docs/operations.md#limits-per-client), and how many the whole server holds, capped
 * below its file-descriptor limit (docs/operations.md#server-wide-stream-capacity). A place
 * is taken synchronously before any await, so concurrent opens cannot overshoot, and given
 * back exactly once.
 */
export class StreamQuota {
  readonly max: number
  /**
   * Most streams the whole server holds at once; unbounded until the server sets it once it
   * listens (it depends on the descriptors the process holds by then).
   */
  capacity = Number.POSITIVE_INFINITY
  readonly #open = new Map<string, number>()
  #total = 0

  constructor(max: number) {
    this.max = max
  }

  /**
   * Takes a place for `client`: a release function to call when the stream ends (calling it
   * again does nothing), or why not: the client holds `max` already (`client`), or the server
   * holds `capacity` (`server`).
   */
  acquire(client: string): (() => void) | Refusal {
    const held = this.#open.get(client) ?? 0
    if (held >= this.max) return 'client'
    if (this.#total >= this.capacity) return 'server'
    this.#open.set(client, held + 1)
    this.#total++
    let released = false
    return () => {
      if (released) return
      released = true
      this.#total--
      const now = (this.#open.get(client) ?? 1) - 1
      // note: clients that hold nothing are forgotten, so the map is as large as the open streams
      if (now <= 0) this.#open.delete(client)
      else this.#open.set(client, now)
    }
  }

  /** Streams `client` holds now. */
  held(client: string): number {
    return this.#open.get(client) ?? 0
  }

  /** Streams held by every client together. */
  get total(): number {
    return this.#total
  }
}
