/**
 * Where time is read: the system clock in production; in tests, a clock the test moves by
 * hand, so that waiting for a TTL or a window to pass takes no real time. The shape is
 * lru-cache's `perf` option, so a cache can take it as it is.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

/** The system clock. */
export const systemClock: Clock = { now: () => Date.now() }
