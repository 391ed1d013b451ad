import { randomInt } from 'node:crypto'

/**
 * The seed of a run's randomness: TEST_SEED (FUZZ_SEED too, its older name) replays a run,
 * otherwise a new one is drawn. Every test that draws random numbers takes them from
 * `seeded(t)`, which prints the seed when the test fails.
 */
export function runSeed(): number {
  const given = process.env.TEST_SEED || process.env.FUZZ_SEED
  if (given === undefined || given === '') return randomInt(2 ** 31)
  const seed = Number(given)
  if (!Number.isSafeInteger(seed)) throw new Error(`TEST_SEED must be an integer, got "${given}"`)
  return seed
}

/** Numbers from one seed, the same every time for the same seed. */
export interface Random {
  readonly seed: number
  /** A float in [0, 1). */
  next(): number
  /** An integer in [min, max). */
  int(min: number, max: number): number
  /** One element of a non-empty list. */
  pick<T>(list: readonly T[]): T
}

/** A generator on `seed` (mulberry32: small, fast, and good enough to pick test inputs). */
export function random(seed: number): Random {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = state
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32
  }
  return {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min)),
    pick: (list) => list[Math.floor(next() * list.length)] as (typeof list)[number],
  }
}

/** What `seeded` needs of a test's context. */
interface SeededContext {
  readonly name: string
  after(fn: () => unknown): void
  diagnostic(message: string): void
}

/** Prints `seed`, and how to replay it, when the test `t` fails. */
export function reportSeedOnFailure(t: SeededContext, seed: number): void {
  t.after(() => {
    // note: TestContext.passed is there at run time (Node 21+), not yet in @types/node
    if ((t as { passed?: boolean }).passed !== true) {
      const replay = `replay with TEST_SEED=${seed}`
      t.diagnostic(`seed ${seed}: ${replay}`)
      process.stderr.write(`${t.name}: random seed ${seed} (${replay})\n`)
    }
  })
}

/** A seeded generator for one test, on the run's seed, printed when the test fails. */
export function seeded(t: SeededContext, seed: number = runSeed()): Random {
  reportSeedOnFailure(t, seed)
  return random(seed)
}
