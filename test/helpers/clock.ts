import type { Clock } from '../../src/lib/clock.ts'

/** A clock that stands still until the test moves it: a TTL passes with no real wait. */
export interface TestClock extends Clock {
  /** Moves the clock forward by `ms`. */
  advance(ms: number): void
}

/** A clock for a test, standing at `start` (by default the real time when it is made). */
export function testClock(start: number = Date.now()): TestClock {
  let now = start
  return {
    now: () => now,
    advance(ms) {
      if (!(ms >= 0)) throw new Error(`a clock only moves forward (asked for ${ms} ms)`)
      now += ms
    },
  }
}
