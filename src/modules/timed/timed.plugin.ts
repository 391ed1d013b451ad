import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { TimedWorker } from './timed-worker.ts'
import { valueEnds } from './value-ends.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The instance's timed worker (docs/architecture.md#timed-changes): sources of timed
     * work register with it; tests run a pass with `runOnce` after moving the clock.
     */
    timed: TimedWorker
  }
}

export interface TimedOptions {
  /** The longest the worker sleeps between passes (TIMED_POLL_MS). */
  timedPollMs?: number
}

/**
 * Timed changes (docs/architecture.md#timed-changes): the worker that writes values at the
 * time set for them, on every instance, each once; values that end are its first source.
 */
export const timed = fp(
  async (app: FastifyInstance, options: TimedOptions) => {
    const worker = new TimedWorker({
      deps: app.services,
      pollMs: options.timedPollMs,
      onError: (err, source) =>
        app.log.warn({ err, source }, 'writing timed changes failed; the next pass retries'),
    })
    worker.register(valueEnds)
    app.decorate('timed', worker)
    app.addHook('onReady', async () => worker.start())
    app.addHook('preClose', () => worker.close())
  },
  { name: 'timed', dependencies: ['statuses'] },
)
