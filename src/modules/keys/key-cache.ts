import { LRUCache } from 'lru-cache'
import type { User } from '../../db/database.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import type { CredentialLimits } from './scopes.ts'

/** What authentication remembers of a key it looked up. */
export interface KeyCacheEntry {
  user: User
  keyId: string
  /** What the key may do, and where (docs/accounts.md#scoped-keys). */
  limits: CredentialLimits
  /** When the key itself expires (ms since epoch), or null. */
  expiresAt: number | null
}

interface Cached extends KeyCacheEntry {
  cachedAt: number
}

/**
 * Recently authenticated keys, by key hash, so the hot path skips a database lookup.
 * Revoking a key, or changing its user's standing, through this instance or announced on the
 * credentials bus (any instance, or the CLI, on PostgreSQL; the CLI on SQLite through the
 * engine's check for other processes' commits) forgets it at once
 * (docs/api.md#authentication); anything else is seen within `ttlMs`. Unknown keys are never cached, so guessing
 * cannot fill it; it holds the `max` keys used last.
 *
 * note: lru-cache bounds it; the age is checked here rather than with lru-cache's own `ttl`,
 * whose entries stay fresh at exactly their TTL (and forever when cached at clock time 0):
 * a key is trusted for less than `ttlMs`, and never at or after its own expiry.
 */
export class KeyCache {
  readonly ttlMs: number
  readonly #clock: Clock
  /** null when caching is off (`ttlMs` 0). */
  readonly #entries: LRUCache<string, Cached> | null

  constructor({
    ttlMs = 5_000,
    max = 10_000,
    clock = systemClock,
  }: { ttlMs?: number; max?: number; clock?: Clock } = {}) {
    this.ttlMs = ttlMs
    this.#clock = clock
    this.#entries = ttlMs > 0 ? new LRUCache({ max }) : null
  }

  /** The entry of a key hash, unless it is `ttlMs` old or the key has expired since. */
  get(hash: string): KeyCacheEntry | undefined {
    const entry = this.#entries?.get(hash)
    if (!entry) return undefined
    const now = this.#clock.now()
    if (
      now - entry.cachedAt >= this.ttlMs ||
      (entry.expiresAt !== null && entry.expiresAt <= now)
    ) {
      this.#entries?.delete(hash)
      return undefined
    }
    return entry
  }

  /** Remembers a key found active in the database. */
  set(hash: string, entry: KeyCacheEntry): void {
    this.#entries?.set(hash, { ...entry, cachedAt: this.#clock.now() })
  }

  /** Forgets every key (revocations may have been missed: the bus lost its connection). */
  clear(): void {
    this.#entries?.clear()
  }

  /** Forgets every key of a user (their verification, plan or name changed). */
  forgetUser(userId: string): void {
    if (!this.#entries) return
    for (const [hash, entry] of this.#entries.entries())
      if (entry.user.id === userId) this.#entries.delete(hash)
  }

  /** Forgets a key (revoked or rotated). */
  forgetKey(keyId: string): void {
    if (!this.#entries) return
    for (const [hash, entry] of this.#entries.entries())
      if (entry.keyId === keyId) this.#entries.delete(hash)
  }
}
