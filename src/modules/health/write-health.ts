import type { WriteRefusal } from '../../db/engine.ts'
import { writeRefusalOf } from '../../db/storage-error.ts'
import type { Writer } from '../../db/writer.ts'
import type { Clock } from '../../lib/clock.ts'

/** How long after the last refused write /readyz tries a write of its own. */
export const WRITE_PROBE_AFTER_MS = 30_000

/**
 * Whether storage takes writes, as the last writes found it (docs/operations.md#health-probes-and-metrics).
 * A write refused because storage is full or read-only makes /readyz answer 503 until a write
 * succeeds again. With no write coming (a load balancer has taken the instance out), /readyz
 * tries one itself once no write has been refused for WRITE_PROBE_AFTER_MS. note: not
 * sooner: a small write can fit where larger ones fail (SQLite reuses log space it holds), and
 * a probe that passes while clients' writes fail would make the instance ready at once again.
 */
export class WriteHealth {
  readonly #clock: Clock
  readonly #probe: () => Promise<void>
  #refusal: WriteRefusal | undefined
  #refusedAt = 0
  #probing: Promise<void> | undefined

  constructor(options: { clock: Clock; probe: () => Promise<void> }) {
    this.#clock = options.clock
    this.#probe = options.probe
  }

  /** A write failed: remembered when storage refused it (full, read-only). */
  failed(err: unknown): void {
    const why = writeRefusalOf(err)
    if (why === undefined) return
    this.#refusal = why
    this.#refusedAt = this.#clock.now()
  }

  /** A write was committed: storage takes writes. */
  succeeded(): void {
    this.#refusal = undefined
  }

  /** The writer, telling this of every unit it commits or fails to. */
  watch(writer: Writer): Writer {
    const told = <T>(unit: Promise<T>): Promise<T> =>
      unit.then(
        (value) => {
          this.succeeded()
          return value
        },
        (err: unknown) => {
          this.failed(err)
          throw err
        },
      )
    return { run: (work) => told(writer.run(work)) }
  }

  /** Why storage refuses writes now, for /readyz; undefined when it takes them, as far as known. */
  async refusal(): Promise<WriteRefusal | undefined> {
    if (this.#refusal === undefined) return undefined
    if (this.#clock.now() - this.#refusedAt < WRITE_PROBE_AFTER_MS) return this.#refusal
    // one probe at a time, however many probes of /readyz ask
    this.#probing ??= this.#probe()
      .then(
        () => this.succeeded(),
        (err: unknown) => {
          this.failed(err)
          // storage unreachable or busy says nothing either way: the next probe waits as long
          if (this.#refusal !== undefined) this.#refusedAt = this.#clock.now()
        },
      )
      .finally(() => {
        this.#probing = undefined
      })
    await this.#probing
    return this.#refusal
  }
}
