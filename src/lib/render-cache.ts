import { LRUCache } from 'lru-cache'
import { type Clock, systemClock } from './clock.ts'

/**
 * A rendered answer as sent: its body and every header of its 200 (the ETag among them), both
 * made once when it is rendered, so a hit builds nothing per request.
 */
export interface Rendered {
  /**
   * note: text, not a Buffer: Node then sends the status line, the headers and the body in
   * one `write` of one string; a Buffer body goes out in a `writev` of the two, whose chunk
   * list and write request cost more per answer (docs/performance.md#public-reads)
   */
  body: string
  etag: string
  /** Every header of the 200 answer, the ETag and Content-Type included. */
  headers: Readonly<Record<string, string>>
}

interface Entry {
  rendered: Rendered
  /** Who it shows (what invalidates it). */
  owner: string
  /** When it was stored (clock ms), for the age limit. */
  at: number
}

export interface RenderCacheOptions {
  /** Most bytes of bodies kept (an LRU by size). */
  maxBytes: number
  /**
   * Longest an entry is served. Invalidation is the way entries go when what they show
   * changes; the age limit bounds the life of one whose change nobody announced.
   */
  maxAgeMs: number
  clock?: Clock
  /**
   * Starts hearing of changes to `owner` (calling `invalidate(owner)` for each); called when
   * the first entry of an owner is stored, and the returned function when its last goes.
   */
  watch?: (owner: string) => () => void
  /** How many of the latest invalidations a read in flight is checked against (see `begin`). */
  recent?: number
}

/**
 * Answers rendered once and served as bytes until what they show changes: each entry under a
 * key (what was asked: a path, a variant) and an owner (what it shows: a status id), dropped
 * when its owner is invalidated, when it is older than `maxAgeMs`, or least recently used
 * beyond `maxBytes`.
 *
 * A read that renders races with writes: it may read the old state, then store it after the
 * invalidation that should have removed it. So a read takes a token first (`begin`), and
 * `store` refuses an entry whose owner was invalidated (or the cache cleared) since.
 */
export class RenderCache {
  readonly #entries: LRUCache<string, Entry>
  readonly #clock: Clock
  readonly #maxAgeMs: number
  readonly #watch: ((owner: string) => () => void) | undefined
  /** Keys stored per owner, and the function that stops watching it. */
  readonly #owners = new Map<string, { keys: Set<string>; unwatch: () => void }>()
  /** The owners of the latest invalidations, by sequence number modulo their count. */
  readonly #recent: (string | undefined)[]
  /** Invalidations so far (the next one's sequence number). */
  #seq = 0
  /** Tokens before this were issued before a `clear`: their reads store nothing. */
  #clearedAt = 0

  constructor(options: RenderCacheOptions) {
    this.#clock = options.clock ?? systemClock
    this.#maxAgeMs = options.maxAgeMs
    this.#watch = options.watch
    this.#recent = new Array(options.recent ?? 256)
    this.#entries = new LRUCache<string, Entry>({
      maxSize: options.maxBytes,
      // note: the body's UTF-8 bytes, as sent (its length in UTF-16 units under-counts text
      // outside ASCII); worked out once, when the entry is stored
      sizeCalculation: (entry, key) => Buffer.byteLength(entry.rendered.body) + key.length + 200,
      // note: on eviction, replacement and deletion alike: the owner's list of keys follows
      dispose: (entry, key) => this.#forgetKey(entry.owner, key),
    })
  }

  /** The entry under `key`, if it is there and young enough. */
  get(key: string): Rendered | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (this.#clock.now() - entry.at > this.#maxAgeMs) {
      this.#entries.delete(key)
      return undefined
    }
    return entry.rendered
  }

  /** A token to take before reading what will be rendered (see `store`). */
  begin(): number {
    return this.#seq
  }

  /**
   * Keeps `rendered` under `key`, unless `owner` was invalidated (or the cache cleared)
   * after `token` was taken: then what was read may be older than that change. Returns
   * whether it was kept.
   */
  store(token: number, key: string, owner: string, rendered: Rendered): boolean {
    if (token < this.#clearedAt || this.#seq - token > this.#recent.length) return false
    for (let seq = token; seq < this.#seq; seq++)
      if (this.#recent[seq % this.#recent.length] === owner) return false
    // an entry replaced leaves its owner's keys first (which may end that owner's watch)
    this.#entries.delete(key)
    let watched = this.#owners.get(owner)
    if (!watched) {
      watched = { keys: new Set(), unwatch: this.#watch?.(owner) ?? (() => {}) }
      this.#owners.set(owner, watched)
    }
    watched.keys.add(key)
    this.#entries.set(key, { rendered, owner, at: this.#clock.now() })
    // too large to keep at all: lru-cache stores nothing
    if (this.#entries.has(key)) return true
    this.#forgetKey(owner, key)
    return false
  }

  /**
   * The entry under `key`, or else what `render` makes, kept unless its owner changed while
   * it was rendered. `render` throws for what is not to be answered (nothing is kept).
   */
  async through(
    key: string,
    render: () => Promise<{ owner: string; rendered: Rendered }>,
  ): Promise<Rendered> {
    const kept = this.get(key)
    if (kept !== undefined) return kept
    const token = this.begin()
    const { owner, rendered } = await render()
    this.store(token, key, owner, rendered)
    return rendered
  }

  /**
   * Answers with `send`: at once for a kept entry (a route handler that returns nothing,
   * no promise to wait for on the hot path), else once `render` is through (the promise of
   * what `send` returns, for an async handler to resolve to).
   */
  serve<T>(
    key: string,
    render: () => Promise<{ owner: string; rendered: Rendered }>,
    send: (rendered: Rendered) => T,
  ): Promise<T> | undefined {
    const kept = this.get(key)
    if (kept === undefined) return this.through(key, render).then(send)
    send(kept)
    return undefined
  }

  /** Drops every entry of `owner`: what it shows changed. */
  invalidate(owner: string): void {
    this.#recent[this.#seq % this.#recent.length] = owner
    this.#seq += 1
    const watched = this.#owners.get(owner)
    if (!watched) return
    for (const key of [...watched.keys]) this.#entries.delete(key)
  }

  /** Drops everything (after a gap in the changes heard: any entry may be out of date). */
  clear(): void {
    this.#seq += 1
    this.#clearedAt = this.#seq
    this.#entries.clear()
  }

  /** Entries kept (tests). */
  get size(): number {
    return this.#entries.size
  }

  /** Owners being watched (tests: every watch ends with its last entry). */
  get watching(): number {
    return this.#owners.size
  }

  #forgetKey(owner: string, key: string): void {
    const watched = this.#owners.get(owner)
    if (!watched) return
    watched.keys.delete(key)
    if (watched.keys.size > 0) return
    this.#owners.delete(owner)
    watched.unwatch()
  }
}
