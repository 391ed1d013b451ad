/** How one unit of a batch ended. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown }

interface Pending<U, R> {
  unit: U
  resolve: (value: R) => void
  reject: (error: unknown) => void
}

/**
 * Gathers the units that arrive in the same turn of the event loop, or while `concurrency`
 * batches are running, and hands them to `runBatch` together, at most `maxBatch` units each.
 * `runBatch` answers each unit's outcome, in order; should it throw, every unit of the batch
 * fails with that error.
 */
export function turnBatcher<U, R>(
  runBatch: (units: U[]) => Promise<Settled<R>[]>,
  { maxBatch = 128, concurrency = 1 }: { maxBatch?: number; concurrency?: number } = {},
): (unit: U) => Promise<R> {
  const queue: Pending<U, R>[] = []
  let running = 0
  let scheduled = false

  async function run(batch: Pending<U, R>[]): Promise<void> {
    try {
      const outcomes = await runBatch(batch.map((pending) => pending.unit))
      batch.forEach((pending, i) => {
        const outcome = outcomes[i] as Settled<R>
        if (outcome.ok) pending.resolve(outcome.value)
        else pending.reject(outcome.error)
      })
    } catch (error) {
      for (const pending of batch) pending.reject(error)
    }
  }

  function start(): void {
    while (queue.length > 0 && running < concurrency) {
      running++
      void run(queue.splice(0, maxBatch)).finally(() => {
        running--
        start()
      })
    }
  }

  return (unit) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ unit, resolve, reject })
      if (scheduled || running >= concurrency) return
      scheduled = true
      // note: setImmediate, not a microtask: every request parsed in this turn of the event
      // loop joins the batch before it starts
      setImmediate(() => {
        scheduled = false
        start()
      })
    })
}
