import type { Writer } from '../../db/writer.ts'
import type { Clock } from '../../lib/clock.ts'
import { releaseLease, takeLease } from './leases.repository.ts'

/** How long a lease lasts unless renewed: another instance takes over within this. */
export const LEASE_MS = 8_000
/** How often the holder renews its lease, and others try to take it. */
export const LEASE_RENEW_MS = 2_000

export interface LeaseHolderOptions {
  writer: Writer
  clock: Clock
  /** The lease's name (one per kind of work). */
  name: string
  /** This instance's name in the lease row (unique per process). */
  holder: string
  leaseMs?: number
  renewMs?: number
  /** Called when this instance took the lease (start the work). */
  onAcquired: () => void
  /** Called when this instance lost the lease or gave it up (stop the work at once). */
  onLost: () => Promise<void>
  onError: (err: unknown) => void
}

/**
 * Holds a lease in the database for work that one instance at a time does
 * (docs/integrations.md#one-bridge-across-instances): tries to take it every `renewMs`, renews
 * it while held, and lets the work go as soon as a renewal fails or is refused, so that two
 * instances never both hold it for longer than the lease's time.
 */
export class LeaseHolder {
  readonly #options: LeaseHolderOptions
  readonly #leaseMs: number
  readonly #renewMs: number
  #held = false
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #closed = false

  constructor(options: LeaseHolderOptions) {
    this.#options = options
    this.#leaseMs = options.leaseMs ?? LEASE_MS
    this.#renewMs = options.renewMs ?? LEASE_RENEW_MS
  }

  /** True while this instance holds the lease. */
  get held(): boolean {
    return this.#held
  }

  start(): void {
    void this.#tick()
  }

  async #tick(): Promise<void> {
    if (this.#closed) return
    this.#running = this.#attempt()
    await this.#running
    this.#running = undefined
    if (this.#closed) return
    this.#timer = setTimeout(() => void this.#tick(), this.#renewMs)
    this.#timer.unref()
  }

  async #attempt(): Promise<void> {
    const { writer, clock, name, holder } = this.#options
    const now = clock.now()
    let holds: boolean
    try {
      holds = await writer.run((tx) =>
        takeLease(tx, {
          name,
          holder,
          now: new Date(now).toISOString(),
          until: new Date(now + this.#leaseMs).toISOString(),
        }),
      )
    } catch (err) {
      this.#options.onError(err)
      // note: a renewal that failed may have left the lease to run out: another instance may
      // take it, so the work stops until a renewal succeeds again
      holds = false
    }
    if (this.#closed) return
    if (holds && !this.#held) {
      this.#held = true
      this.#options.onAcquired()
    } else if (!holds && this.#held) {
      this.#held = false
      await this.#options.onLost()
    }
  }

  /** Stops trying, lets the work go and gives the lease up for the next instance. */
  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    await this.#running
    if (!this.#held) return
    this.#held = false
    await this.#options.onLost()
    const { writer, name, holder } = this.#options
    await writer.run((tx) => releaseLease(tx, name, holder)).catch(this.#options.onError)
  }
}
