import type { User } from '../../db/database.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'

interface Entry {
  user: User
  keyId: string
  /** When the key itself expires (ms since epoch), or null. */
  expiresAt: number | null
  cachedAt: number
}

/**
 * Recently authenticated keys, by key hash, so the hot path skips a database lookup.
 * Revoking a key through this instance forgets it at once; a change made elsewhere (the CLI,
 * another instance) is seen within `ttlMs`. Unknown keys are never cached, so guessing
 * cannot fill it; it holds at most `max` entries.
 */
export class KeyCache {
  readonly #entries = new Map<string, Entry>()
  readonly #clock: Clock
  readonly ttlMs: number
  readonly max: number

  constructor({
    ttlMs = 5_000,
    max = 10_000,
    clock = systemClock,
  }: { ttlMs?: number; max?: number; clock?: Clock } = {}) {
    this.ttlMs = ttlMs
    this.max = max
    this.#clock = clock
  }

  get(hash: string): Entry | undefined {
    const now = this.#clock.now()
    const entry = this.#entries.get(hash)
    if (!entry) return undefined
    if (
      now - entry.cachedAt >= this.ttlMs ||
      (entry.expiresAt !== null && entry.expiresAt <= now)
    ) {
      this.#entries.delete(hash)
      return undefined
    }
    return entry
  }

  set(hash: string, entry: Omit<Entry, 'cachedAt'>): void {
    if (this.ttlMs <= 0) return
    const now = this.#clock.now()
    if (!this.#entries.has(hash) && this.#entries.size >= this.max)
      this.#entries.delete(this.#entries.keys().next().value as string)
    this.#entries.set(hash, { ...entry, cachedAt: now })
  }

  /** Forgets a key (revoked or rotated). */
  forgetKey(keyId: string): void {
    for (const [hash, entry] of this.#entries) if (entry.keyId === keyId) this.#entries.delete(hash)
  }
}
