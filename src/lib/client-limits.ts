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

/**
 * How many long-lived things (event streams) each client holds at once, capped per client
 * key (docs/operations.md#limits-per-client). A place is taken synchronously
 * before any await, so concurrent opens cannot overshoot, and given back exactly once.
 */
export class StreamQuota {
  readonly max: number
  readonly #open = new Map<string, number>()

  constructor(max: number) {
    this.max = max
  }

  /**
   * Takes a place for `client`: a release function to call when the stream ends (calling it
   * again does nothing), or null when the client holds `max` already.
   */
  acquire(client: string): (() => void) | null {
    const held = this.#open.get(client) ?? 0
    if (held >= this.max) return null
    this.#open.set(client, held + 1)
    let released = false
    return () => {
      if (released) return
      released = true
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

  /** Streams held by every client together (for metrics). */
  get total(): number {
    let sum = 0
    for (const n of this.#open.values()) sum += n
    return sum
  }
}
