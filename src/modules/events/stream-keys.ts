import type { User } from '../../db/database.ts'
import { SseFrame, type SseStream } from '../../lib/sse.ts'
import { authLevelOf } from '../users/users.service.ts'

/** Why a stream's key no longer lets it see anything: sent as `event: unavailable`. */
export type KeyEndReason = 'unauthorized' | 'notVerified'

/**
 * The `unavailable` event that ends a stream whose key stopped working. No `id:` line: the
 * client keeps the id of the last status it got, and resumes from there with a valid key.
 */
const keyEndFrame = (reason: KeyEndReason) =>
  new SseFrame(`event: unavailable\ndata: ${JSON.stringify({ reason })}\n\n`)

/** Looks a key up by its hash, in the database (never through the key cache: its age would add up). */
export type KeyCheck = (hash: string) => Promise<{ user: User; keyId: string } | null>

/**
 * How often open streams' keys are checked, for a key cache trusting a key `cacheTtlMs`: half
 * of it, so a key revoked where this instance cannot hear of it (the CLI on SQLite) ends its
 * streams within AUTH_CACHE_SECONDS (docs/api.md#authentication); the check looks the keys up
 * in the database, not in the cache, so the cache's age adds nothing. Every second with the
 * cache off.
 */
export const streamKeyCheckIntervalMs = (cacheTtlMs: number): number =>
  cacheTtlMs > 0 ? Math.max(250, Math.floor(cacheTtlMs / 2)) : 1_000

interface Tracked {
  keyId: string
  streams: Set<SseStream>
}

/**
 * The API keys this instance's open event streams were opened with
 * (docs/sharing.md#live-updates-server-sent-events: a revoked or expired key gets 401, and so does
 * an open stream). Every `intervalMs` each distinct key is looked up once, however many streams it
 * holds open, in the database; a key that no longer works (revoked, expired, rotated away)
 * ends its streams with `event: unavailable` `{"reason":"unauthorized"}`, and a user no longer
 * verified ends them with `{"reason":"notVerified"}`. A key revoked through this instance, or
 * announced revoked on the bus (every instance on PostgreSQL), ends its streams at once.
 */
export class StreamKeys {
  readonly #byHash = new Map<string, Tracked>()
  readonly #check: KeyCheck
  readonly #intervalMs: number
  readonly #onError: (err: unknown) => void
  #timer: NodeJS.Timeout | undefined
  #checking = false

  constructor(options: { check: KeyCheck; intervalMs: number; onError?: (err: unknown) => void }) {
    this.#check = options.check
    this.#intervalMs = Math.max(options.intervalMs, 250)
    this.#onError = options.onError ?? (() => {})
  }

  /** Watches `stream`, opened with the key of this hash and id, until it closes. */
  track(hash: string, keyId: string, stream: SseStream): void {
    if (stream.closed) return
    let tracked = this.#byHash.get(hash)
    if (!tracked) {
      tracked = { keyId, streams: new Set() }
      this.#byHash.set(hash, tracked)
    }
    tracked.streams.add(stream)
    stream.onClose(() => {
      const current = this.#byHash.get(hash)
      if (!current) return
      current.streams.delete(stream)
      if (current.streams.size === 0) this.#byHash.delete(hash)
      if (this.#byHash.size === 0) this.#stop()
    })
    this.#start()
  }

  /** Streams open with some key (tests). */
  get size(): number {
    let n = 0
    for (const tracked of this.#byHash.values()) n += tracked.streams.size
    return n
  }

  /** Ends the streams of a key revoked or rotated through this instance, at once. */
  endKey(keyId: string): void {
    for (const [hash, tracked] of this.#byHash)
      if (tracked.keyId === keyId) this.#end(hash, 'unauthorized')
  }

  /** Looks up every watched key once; ends the streams of those that no longer work. */
  async checkAll(): Promise<void> {
    if (this.#checking) return
    this.#checking = true
    try {
      for (const hash of [...this.#byHash.keys()]) {
        let found: Awaited<ReturnType<KeyCheck>>
        try {
          found = await this.#check(hash)
        } catch (err) {
          // storage unreachable: the stream cannot be judged now; the next round will
          this.#onError(err)
          continue
        }
        if (!found) this.#end(hash, 'unauthorized')
        else if (authLevelOf(found.user) !== 'verified') this.#end(hash, 'notVerified')
      }
    } finally {
      this.#checking = false
    }
  }

  close(): void {
    this.#stop()
    this.#byHash.clear()
  }

  #end(hash: string, reason: KeyEndReason): void {
    const tracked = this.#byHash.get(hash)
    if (!tracked) return
    const frame = keyEndFrame(reason)
    for (const stream of [...tracked.streams]) {
      stream.send(frame)
      stream.close()
    }
  }

  #start(): void {
    if (this.#timer) return
    this.#timer = setInterval(() => void this.checkAll(), this.#intervalMs)
    // note: never keeps the process alive on its own
    this.#timer.unref()
  }

  #stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }
}
