import type { Piscina } from 'piscina'
import { tooManyRequests } from '../../lib/errors.ts'

/** Seconds a caller refused by a full pool is told to wait (Retry-After). */
export const POOL_RETRY_AFTER_S = 1

/**
 * Threads of their own for work too heavy for the event loop and kept out of libuv's thread
 * pool (password hashes, the password rules' data: docs/accounts.md#password-hashing): at
 * most `threads` tasks at a time, `queue` more waiting, and one more is refused at once with
 * 429 `tooManyRequests`. The threads (piscina) start with the first task, run at a lower
 * priority than the server's other threads, and end when idle, so a server nobody signs in to
 * holds none.
 */
export class ThreadPool<In, Out> {
  /** Tasks run at once. */
  readonly threads: number
  /** Tasks waiting beyond those, before one more is refused. */
  readonly queue: number
  readonly #worker: URL
  readonly #run: ((input: In) => Promise<Out>) | undefined
  #piscina: Promise<Piscina> | undefined
  #admitted = 0

  constructor({
    worker,
    threads,
    queue,
    run,
  }: {
    /** The thread's program: a plain JavaScript module whose exports are the tasks. */
    worker: URL
    threads: number
    queue: number
    /** Runs a task instead of the threads (a test holds it, to fill the pool at will). */
    run?: (input: In) => Promise<Out>
  }) {
    this.#worker = worker
    this.threads = threads
    this.queue = queue
    this.#run = run
  }

  /** Tasks now running or waiting. */
  get pending(): number {
    return this.#admitted
  }

  /**
   * Runs the worker's export `name` (its module.exports itself when that is a function) on
   * `input`, or refuses at once (429 `tooManyRequests`) when the pool is full.
   */
  async run(input: In, name?: string): Promise<Out> {
    // note: checked and counted before the first await, so tasks asked for at once are
    // admitted in order and the one past the limit is refused whatever the threads are doing
    if (this.#admitted >= this.threads + this.queue)
      throw tooManyRequests(
        'Too many passwords are being checked right now; try again shortly',
        POOL_RETRY_AFTER_S,
      )
    this.#admitted += 1
    try {
      if (this.#run) return await this.#run(input)
      const piscina = await this.#threads()
      return (await piscina.run(input, name === undefined ? {} : { name })) as Out
    } finally {
      this.#admitted -= 1
    }
  }

  // note: piscina and its threads load with the first task (a server nobody signs in to pays
  // nothing for them)
  #threads(): Promise<Piscina> {
    this.#piscina ??= import('piscina').then(
      ({ Piscina }) =>
        new Piscina({
          filename: this.#worker.href,
          minThreads: 0,
          maxThreads: this.threads,
          idleTimeout: 30_000,
          // the server's own threads (the event loop, libuv's pool) come first on a busy host
          niceIncrement: 10,
        }),
    )
    return this.#piscina
  }

  /** Ends the threads (they end alone when idle; a test that made a pool calls this). */
  async close(): Promise<void> {
    const piscina = this.#piscina
    this.#piscina = undefined
    if (piscina) await (await piscina).destroy()
  }
}
