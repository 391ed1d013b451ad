import type { User } from '../../db/database.ts'
import { SseFrame, type SseStream } from '../../lib/sse.ts'
import { authLevelOf } from '../users/users.service.ts'

/** Why a stream's credential no longer lets it see anything: sent as `event: unavailable`. */
export type CredentialEndReason = 'unauthorized' | 'notVerified'

/**
 * The `unavailable` event that ends a stream whose credential stopped working. No `id:` line:
 * the client keeps the id of the last status it got, and resumes from there with a valid one.
 */
const endFrame = (reason: CredentialEndReason) =>
  new SseFrame(`event: unavailable\ndata: ${JSON.stringify({ reason })}\n\n`)

/** What a stream was opened with: an API key or a session, known by id and hash. */
export interface StreamCredential {
  kind: 'key' | 'session'
  id: string
  hash: string
}

/**
 * Looks a credential up by its hash, in the database (never through the key cache: its age
 * would add up): its user while it works, else null.
 */
export type CredentialCheck = (credential: StreamCredential) => Promise<User | null>

/**
 * How often open streams' credentials are checked, for a key cache trusting a key
 * `cacheTtlMs`: half of it, so a key revoked or a session ended where this instance cannot
 * hear of it (the CLI on SQLite, another instance) ends its streams within AUTH_CACHE_SECONDS
 * (docs/api.md#authentication); the check looks the credentials up in the database, not in the
 * cache, so the cache's age adds nothing. Every second with the cache off.
 */
export const streamCheckIntervalMs = (cacheTtlMs: number): number =>
  cacheTtlMs > 0 ? Math.max(250, Math.floor(cacheTtlMs / 2)) : 1_000

interface Tracked {
  credential: StreamCredential
  streams: Set<SseStream>
}

const keyOf = (credential: StreamCredential) => `${credential.kind} ${credential.hash}`

/**
 * The credentials (API keys and sessions) this instance's open event streams were opened with
 * (docs/sharing.md#live-updates-server-sent-events: a revoked or expired key or session gets
 * 401, and so does an open stream). Every `intervalMs` each distinct credential is looked up
 * once, however many streams it holds open, in the database; one that no longer works
 * (revoked, expired, rotated away, signed out, its account disabled) ends its streams with `event: unavailable`
 * `{"reason":"unauthorized"}`, and a user no longer verified ends them with
 * `{"reason":"notVerified"}`. A key revoked or a session ended through this instance, or a key
 * announced revoked on the bus (every instance on PostgreSQL), ends its streams at once.
 */
export class StreamCredentials {
  readonly #tracked = new Map<string, Tracked>()
  readonly #check: CredentialCheck
  readonly #intervalMs: number
  readonly #onError: (err: unknown) => void
  #timer: NodeJS.Timeout | undefined
  #checking = false

  constructor(options: {
    check: CredentialCheck
    intervalMs: number
    onError?: (err: unknown) => void
  }) {
    this.#check = options.check
    this.#intervalMs = Math.max(options.intervalMs, 250)
    this.#onError = options.onError ?? (() => {})
  }

  /** Watches `stream`, opened with this credential, until it closes. */
  track(credential: StreamCredential, stream: SseStream): void {
    if (stream.closed) return
    const key = keyOf(credential)
    let tracked = this.#tracked.get(key)
    if (!tracked) {
      tracked = { credential: { ...credential }, streams: new Set() }
      this.#tracked.set(key, tracked)
    }
    tracked.streams.add(stream)
    stream.onClose(() => {
      const current = this.#tracked.get(key)
      if (!current) return
      current.streams.delete(stream)
      if (current.streams.size === 0) this.#tracked.delete(key)
      if (this.#tracked.size === 0) this.#stop()
    })
    this.#start()
  }

  /** Streams open with some credential (tests). */
  get size(): number {
    let n = 0
    for (const tracked of this.#tracked.values()) n += tracked.streams.size
    return n
  }

  /** Ends the streams of a key revoked or rotated through this instance, at once. */
  endKey(keyId: string): void {
    this.#endWhere((c) => c.kind === 'key' && c.id === keyId)
  }

  /** Ends the streams of sessions ended through this instance (sign-out, revoked), at once. */
  endSessions(sessionIds: readonly string[]): void {
    const ids = new Set(sessionIds)
    this.#endWhere((c) => c.kind === 'session' && ids.has(c.id))
  }

  /** Looks up every watched credential once; ends the streams of those that no longer work. */
  async checkAll(): Promise<void> {
    if (this.#checking) return
    this.#checking = true
    try {
      for (const [key, { credential }] of [...this.#tracked]) {
        let user: User | null
        try {
          user = await this.#check(credential)
        } catch (err) {
          // storage unreachable: the stream cannot be judged now; the next round will
          this.#onError(err)
          continue
        }
        // a disabled account (docs/operations.md#operators): as if its credential were gone
        if (!user || user.disabled_at !== null) this.#end(key, 'unauthorized')
        else if (authLevelOf(user) !== 'verified') this.#end(key, 'notVerified')
      }
    } finally {
      this.#checking = false
    }
  }

  close(): void {
    this.#stop()
    this.#tracked.clear()
  }

  #endWhere(match: (credential: StreamCredential) => boolean): void {
    for (const [key, tracked] of this.#tracked)
      if (match(tracked.credential)) this.#end(key, 'unauthorized')
  }

  #end(key: string, reason: CredentialEndReason): void {
    const tracked = this.#tracked.get(key)
    if (!tracked) return
    const frame = endFrame(reason)
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
