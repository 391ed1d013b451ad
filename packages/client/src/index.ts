import { StatusdError } from './errors.ts'
import { parseEventStream } from './sse.ts'
import type {
  ApiKey,
  CheckAuth,
  HistoryDurations,
  HistoryEntry,
  RoleInvitation,
  ShareView,
  Status,
  StatusInput,
  StatusListEntry,
} from './types.ts'

export { StatusdError } from './errors.ts'
export type * from './types.ts'

export interface StatusdClientOptions {
  /** The service's base URL, e.g. `https://status.example.com` (a path prefix is kept). */
  url: string
  /** An API key (`sdk_…`); without one, only the public views work. */
  apiKey?: string
  /** The fetch to use; the global one by default. */
  fetch?: typeof fetch
  /**
   * How many times a request is tried again after a network error, a 5XX or a 429 (default 2).
   * Writes carry an `Idempotency-Key`, the same on every try, so a retried write never counts
   * twice.
   */
  retries?: number
  /**
   * The first wait between tries, in ms, doubling each time (default 250), each wait between
   * half of it and all of it at random; `Retry-After` wins.
   */
  retryDelayMs?: number
  /** The longest wait between tries, in ms, a longer `Retry-After` included (default: none). */
  maxRetryDelayMs?: number
  /**
   * How the client waits between tries (resolving early, or rejecting, when `signal` aborts):
   * setTimeout by default; a test may pass its own.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
}

/** One page of a list, and the cursor of the next one (null on the last page). */
export interface Page<T> {
  items: T[]
  nextCursor: string | null
}

export interface PageOptions {
  limit?: number
  cursor?: string
}

export interface WriteOptions {
  /** Write only if the status's ETag is still this one (412 preconditionFailed otherwise). */
  ifMatch?: string
  /** Your own `Idempotency-Key`, e.g. to make a write safe across restarts of your program. */
  idempotencyKey?: string
}

/**
 * A value's end, as a write gives it (docs/client.md#values-that-end). A write of `value`
 * without `valueUntil` cancels the end an earlier write gave.
 */
export interface ValueEnd {
  /**
   * When the value ends: an instant (a `Date`, or an ISO 8601 string with its offset) or an
   * ISO 8601 duration from the write, such as `PT45M`; 1 minute to 366 days ahead. `null`
   * cancels a pending end.
   */
  valueUntil?: string | Date | null
  /** The value written when it ends, 1 to 10 characters; by default the value before this write. */
  valueAfter?: string
}

/** What a write sends: the properties to set, a value's end among them. */
export type StatusWrite = Omit<StatusInput, keyof ValueEnd> & ValueEnd

/** What `upsert` resolves with: the status, and whether this write created it. */
export interface Upserted {
  status: Status
  created: boolean
}

/** What `watch` yields: the status as it is after each write, or why the stream ended. */
export type WatchEvent =
  | { type: 'status'; id: number; status: Status }
  | { type: 'unavailable'; reason: 'deleted' | 'notVisible' | 'unauthorized' | 'notVerified' }

export interface WatchOptions {
  /** Ends the iteration (and the connection) when aborted. */
  signal?: AbortSignal
  /** Resume after this event id (a `WatchEvent`'s `id`) instead of starting with the current state. */
  lastEventId?: number
  /**
   * How many times in a row opening the stream may fail before the iteration throws (default:
   * the client's `retries`; `Infinity` never gives up).
   */
  retries?: number
  /**
   * Called before each wait for a reconnection: `error` is why the stream broke (a network
   * error, or the server's refusal as a `StatusdError`), undefined when the server ended it.
   */
  onReconnect?: (info: { error: unknown; delayMs: number }) => void
}

/** What `watchShared` yields: the public view after each write, or why the stream ended. */
export type SharedWatchEvent =
  | { type: 'status'; id: number; status: ShareView }
  | { type: 'unavailable'; reason: 'deleted' | 'notVisible' }

interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  path: string
  query?: Record<string, string | number | undefined>
  body?: unknown
  headers?: Record<string, string>
  /**
   * Whether a failure whose outcome is unknown (network error, 5XX) may be tried again: reads,
   * deletes and writes with an Idempotency-Key. Anything else is retried only on 429 (refused
   * before it was carried out).
   */
  safe: boolean
  /** A 404 on a retry means an earlier try did it (a delete whose answer was lost). */
  goneMeansDone?: boolean
  /** An event stream: its body is read as it comes, not whole before the call resolves. */
  stream?: boolean
  signal?: AbortSignal | undefined
}

const enc = encodeURIComponent

/** The most statuses one stream of many carries (docs/api.md#one-stream-for-many-statuses). */
const STATUSES_PER_STREAM = 100

/** The longest wait before reopening an event stream. */
const MOST_RECONNECT_MS = 30_000

/**
 * A random Idempotency-Key, a version 4 UUID (from crypto.getRandomValues: also on plain-HTTP
 * pages, where randomUUID is missing).
 */
function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** `Retry-After` in seconds (delta-seconds or an HTTP-date), or null. */
function retryAfterOf(headers: Headers): number | null {
  const value = headers.get('retry-after')
  if (value === null) return null
  if (/^\d+$/.test(value.trim())) return Number(value)
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000)
}

/** The `cursor` of the `rel="next"` link of a `Link` header (RFC 8288), or null. */
function nextCursorOf(headers: Headers): string | null {
  for (const part of (headers.get('link') ?? '').split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part)
    if (match && /;\s*rel="?next"?/.test(match[2] ?? ''))
      return new URL(match[1] ?? '', 'http://x').searchParams.get('cursor')
  }
  return null
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        reject(signal.reason)
      },
      { once: true },
    )
  })

/**
 * A client of one statusd (docs/client.md). Every method sends a request and resolves with the
 * answer's body, typed, or rejects with a `StatusdError` (or, when the network failed on every
 * try, the fetch's own error).
 */
export class StatusdClient {
  readonly #base: string
  readonly #apiKey: string | undefined
  readonly #fetch: typeof fetch
  readonly #retries: number
  readonly #retryDelayMs: number
  readonly #maxRetryDelayMs: number
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>

  constructor(options: StatusdClientOptions) {
    this.#base = options.url.replace(/\/+$/, '')
    this.#apiKey = options.apiKey
    // note: bound, so that a browser's fetch is not called on the client as `this`
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis)
    this.#retries = options.retries ?? 2
    this.#retryDelayMs = options.retryDelayMs ?? 250
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? Number.POSITIVE_INFINITY
    this.#sleep = options.sleep ?? sleep
  }

  // --- statuses (docs/api.md#endpoints) ---------------------------------------------------

  /** All your statuses, in creation order. */
  async list(): Promise<StatusListEntry[]> {
    return (
      await this.#json<StatusListEntry[]>({ method: 'GET', path: '/v1/user/status', safe: true })
    ).body
  }

  /**
   * All your statuses with their values, in creation order. A list entry is the interface's
   * four fields, without the value: this reads the list, then each status's current state
   * (getMany). A status deleted in between is left out.
   */
  async listStatuses(): Promise<Status[]> {
    const entries = await this.list()
    return this.#states(
      entries.map((e) => e.statusId),
      true,
    )
  }

  /**
   * The current state of many statuses by id (yours, shared with you, or public), in the order
   * asked: read from the stream of many statuses, which sends each one's state first, in one
   * request per 100 statuses (docs/api.md#one-stream-for-many-statuses). An id you may not see
   * rejects with a 404 `StatusdError` naming it in `errors` (`status.<position>`).
   */
  async getMany(statusIds: readonly string[]): Promise<Status[]> {
    return this.#states(statusIds, false)
  }

  /** One page of your statuses; pass `nextCursor` back as `cursor` for the next. */
  async listPage(options: PageOptions = {}): Promise<Page<StatusListEntry>> {
    return this.#page({ method: 'GET', path: '/v1/user/status', query: { ...options }, safe: true })
  }

  /** A status by id: yours, shared with you, or public. */
  async get(statusId: string): Promise<Status> {
    return (
      await this.#json<Status>({ method: 'GET', path: `/v1/status/${enc(statusId)}`, safe: true })
    ).body
  }

  /** Your status by its key. */
  async getByKey(statusKey: string): Promise<Status> {
    return (
      await this.#json<Status>({
        method: 'GET',
        path: `/v1/status-keys/${enc(statusKey)}`,
        safe: true,
      })
    ).body
  }

  /**
   * Sets your status by key: creates it (named after the key unless `name` is given) or updates
   * the properties sent. Sending the current value again is an update.
   */
  async set(statusKey: string, input: StatusWrite, options: WriteOptions = {}): Promise<Status> {
    return (await this.upsert(statusKey, input, options)).status
  }

  /** As `set`, and tells whether the write created the status (`201 Created`). */
  async upsert(
    statusKey: string,
    input: StatusWrite,
    options: WriteOptions = {},
  ): Promise<Upserted> {
    const { body, status } = await this.#write(
      'POST',
      `/v1/status-keys/${enc(statusKey)}`,
      input,
      options,
    )
    return { status: body, created: status === 201 }
  }

  /** Creates a status under a key that must be new (412 preconditionFailed if it exists). */
  async create(
    statusKey: string,
    input: StatusWrite,
    options: Omit<WriteOptions, 'ifMatch'> = {},
  ): Promise<Status> {
    return (
      await this.#write('POST', `/v1/status-keys/${enc(statusKey)}`, input, options, {
        'if-none-match': '*',
      })
    ).body
  }

  /** Updates a status by id: the owner any property, an updater the value. */
  async update(statusId: string, input: StatusWrite, options: WriteOptions = {}): Promise<Status> {
    return (await this.#write('PATCH', `/v1/status/${enc(statusId)}`, input, options)).body
  }

  /**
   * Deletes your status by id. Retried after a lost answer, a 404 means the first try did it,
   * and counts as done.
   */
  async delete(statusId: string, options: Pick<WriteOptions, 'ifMatch'> = {}): Promise<void> {
    await this.#delete(`/v1/status/${enc(statusId)}`, options)
  }

  /** Deletes your status by key (as `delete`). */
  async deleteByKey(statusKey: string, options: Pick<WriteOptions, 'ifMatch'> = {}): Promise<void> {
    await this.#delete(`/v1/status-keys/${enc(statusKey)}`, options)
  }

  /** Value updates of a status, newest first: one page (1 000 entries without `limit`). */
  async history(statusId: string, options: PageOptions = {}): Promise<Page<HistoryEntry>> {
    return this.#page({
      method: 'GET',
      path: `/v1/status/${enc(statusId)}/history`,
      query: { ...options },
      safe: true,
    })
  }

  /**
   * The time a status held each value from `from` to `to` (now when absent), the longest held
   * first (docs/api.md#time-in-each-value). Instants as RFC 3339 text or `Date`s.
   */
  async durations(
    statusId: string,
    range: { from: string | Date; to?: string | Date },
  ): Promise<HistoryDurations> {
    const instant = (at: string | Date | undefined) => (at instanceof Date ? at.toISOString() : at)
    return (
      await this.#json<HistoryDurations>({
        method: 'GET',
        path: `/v1/status/${enc(statusId)}/history/durations`,
        query: { from: instant(range.from), to: instant(range.to) },
        safe: true,
      })
    ).body
  }

  /**
   * Offers your status to another user (docs/sharing.md#transfer): a pending invitation for
   * the role owner, which they accept or decline. A new offer replaces an earlier one, so a
   * retry makes no second.
   */
  async transfer(statusId: string, userId: string): Promise<RoleInvitation> {
    return (
      await this.#json<RoleInvitation>({
        method: 'POST',
        path: `/v1/status/${enc(statusId)}/transfer`,
        body: { userId },
        safe: true,
      })
    ).body
  }

  /** Withdraws the pending transfer of your status, if there is one. */
  async withdrawTransfer(statusId: string): Promise<void> {
    await this.#delete(`/v1/status/${enc(statusId)}/transfer`, {})
  }

  /** The anonymous view of a public status by its share id (no API key needed). */
  async shared(shareId: string): Promise<ShareView> {
    return (
      await this.#json<ShareView>({ method: 'GET', path: `/v1/share/${enc(shareId)}`, safe: true })
    ).body
  }

  // --- who you are, your keys (docs/api.md#check-a-key, docs/api.md#your-api-keys) -------

  /** Who the API key belongs to, and what it may do. */
  async checkAuth(): Promise<CheckAuth> {
    return (await this.#json<CheckAuth>({ method: 'GET', path: '/v1/checkAuth', safe: true })).body
  }

  /** Your API keys (never their secrets). */
  async listApiKeys(): Promise<ApiKey[]> {
    return (await this.#json<ApiKey[]>({ method: 'GET', path: '/v1/user/api-keys', safe: true }))
      .body
  }

  /** Revokes one of your API keys. */
  async revokeApiKey(keyId: string): Promise<void> {
    await this.#delete(`/v1/user/api-keys/${enc(keyId)}`, {})
  }

  // --- live updates (docs/sharing.md#live-updates-server-sent-events) ---------------------

  /**
   * The status as it is now, then after every write, as they happen, until `signal` aborts
   * or the status goes (`unavailable`, the last event). A dropped connection is opened again
   * with `Last-Event-ID`: the server sends the current state only if it changed meanwhile, so
   * no change is missed and none comes twice. `statusIdOrKey` is tried as an id, then as one
   * of your keys.
   */
  async *watch(statusIdOrKey: string, options: WatchOptions = {}): AsyncGenerator<WatchEvent> {
    let path = `/v1/status/${enc(statusIdOrKey)}/events`
    try {
      await this.#json({
        method: 'GET',
        path: `/v1/status/${enc(statusIdOrKey)}`,
        safe: true,
        signal: options.signal,
      })
    } catch (err) {
      if (!(err instanceof StatusdError && err.errorCode === 'notFound')) throw err
      const status = await this.getByKey(statusIdOrKey)
      path = `/v1/status/${enc(status.id)}/events`
    }
    yield* this.#stream(path, options) as AsyncGenerator<WatchEvent>
  }

  /** As `watch`, for a public status by its share id, without an API key. */
  async *watchShared(
    shareId: string,
    options: WatchOptions = {},
  ): AsyncGenerator<SharedWatchEvent> {
    yield* this.#stream(
      `/v1/share/${enc(shareId)}/events`,
      options,
    ) as AsyncGenerator<SharedWatchEvent>
  }

  async *#stream(
    path: string,
    options: WatchOptions,
  ): AsyncGenerator<WatchEvent | SharedWatchEvent> {
    const { signal, onReconnect } = options
    const retries = options.retries ?? this.#retries
    let lastId = options.lastEventId
    // the server's `retry:` suggestion, then doubling while reconnecting fails
    let reconnectMs = 1000
    let failures = 0
    const pause = async (error: unknown, ms: number) => {
      const delayMs = Math.min(ms, MOST_RECONNECT_MS)
      onReconnect?.({ error, delayMs })
      await this.#sleep(delayMs, signal).catch(() => {})
    }
    while (!signal?.aborted) {
      let response: Response
      try {
        response = await this.#fetch(this.#url(path), {
          headers: {
            ...this.#auth(),
            accept: 'text/event-stream',
            ...(lastId !== undefined && { 'last-event-id': String(lastId) }),
          },
          ...(signal && { signal }),
        })
      } catch (err) {
        if (signal?.aborted) return
        if (failures >= retries) throw err
        failures += 1
        await pause(err, reconnectMs * 2 ** (failures - 1))
        continue
      }
      if (!response.ok) {
        const error = await this.#error(response)
        const retryable = response.status >= 500 || response.status === 429
        if (!retryable || failures >= retries) throw error
        failures += 1
        const wait =
          error.retryAfter === null ? reconnectMs * 2 ** (failures - 1) : error.retryAfter * 1000
        await pause(error, wait)
        continue
      }
      if (!response.body) throw new Error('the event stream has no body')
      let cut: unknown
      try {
        for await (const message of parseEventStream(response.body, (ms) => {
          reconnectMs = ms
        })) {
          failures = 0
          if (message.event === 'unavailable') {
            const { reason } = JSON.parse(message.data)
            yield { type: 'unavailable', reason } as WatchEvent | SharedWatchEvent
            return
          }
          if (message.event !== 'status') continue
          const id = Number(message.id)
          // ids only grow: anything at or below the last one is not news
          if (lastId !== undefined && id <= lastId) continue
          lastId = id
          yield { type: 'status', id, status: JSON.parse(message.data) }
        }
      } catch (err) {
        // a connection cut mid-stream: opened again below, unless it was the caller's abort
        if (signal?.aborted) return
        cut = err
      }
      if (signal?.aborted) return
      await pause(cut, reconnectMs)
    }
  }

  /** The states of `ids` from the stream of many statuses, 100 a stream; `dropGone`: skip refused ids. */
  async #states(ids: readonly string[], dropGone: boolean): Promise<Status[]> {
    const found = new Map<string, Status>()
    for (let start = 0; start < ids.length; start += STATUSES_PER_STREAM) {
      let batch = ids.slice(start, start + STATUSES_PER_STREAM)
      while (batch.length > 0) {
        try {
          await this.#readStates(batch, found)
          break
        } catch (err) {
          if (!dropGone || !(err instanceof StatusdError) || err.status !== 404) throw err
          // the ids the server names are gone (deleted meanwhile): ask again without them
          const gone = new Set(
            err.errors
              .map((e) => /^status\.(\d+)$/.exec(e.field)?.[1])
              .map((i) => (i === undefined ? undefined : batch[Number(i)])),
          )
          if (gone.size === 0 || gone.has(undefined)) throw err
          batch = batch.filter((id) => !gone.has(id))
        }
      }
    }
    return ids.flatMap((id) => found.get(id) ?? [])
  }

  /** One stream's first states into `found`; the stream closes as soon as all came. */
  async #readStates(ids: readonly string[], found: Map<string, Status>): Promise<void> {
    const query = ids.map((id) => `status=${enc(id)}`).join('&')
    const done = new AbortController()
    const response = await this.#send({
      method: 'GET',
      path: `/v1/events?${query}`,
      headers: { accept: 'text/event-stream' },
      signal: done.signal,
      safe: true,
      stream: true,
    })
    if (!response.body) throw new Error('the event stream has no body')
    const waiting = new Set(ids)
    try {
      for await (const message of parseEventStream(response.body, () => {})) {
        const { statusId, status } = JSON.parse(message.data) as {
          statusId: string
          status?: Status
        }
        if (message.event === 'status' && status !== undefined) found.set(statusId, status)
        waiting.delete(statusId)
        if (waiting.size === 0) break
      }
    } finally {
      done.abort()
    }
  }

  // --- requests ---------------------------------------------------------------------------

  #url(path: string, query?: Call['query']): string {
    const url = new URL(this.#base + path)
    for (const [name, value] of Object.entries(query ?? {}))
      if (value !== undefined) url.searchParams.set(name, String(value))
    return url.href
  }

  #auth(): Record<string, string> {
    return this.#apiKey === undefined ? {} : { 'service-api-key': this.#apiKey }
  }

  async #write(
    method: 'POST' | 'PATCH',
    path: string,
    body: StatusWrite,
    options: WriteOptions,
    extra: Record<string, string> = {},
  ): Promise<{ body: Status; status: number }> {
    const headers = {
      'idempotency-key': options.idempotencyKey ?? newIdempotencyKey(),
      ...(options.ifMatch !== undefined && { 'if-match': options.ifMatch }),
      ...extra,
    }
    return this.#json<Status>({ method, path, body, headers, safe: true })
  }

  async #delete(path: string, options: Pick<WriteOptions, 'ifMatch'>): Promise<void> {
    await this.#send({
      method: 'DELETE',
      path,
      headers: options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch },
      safe: true,
      goneMeansDone: true,
    })
  }

  async #page<T>(call: Call): Promise<Page<T>> {
    const { body, headers } = await this.#json<T[]>(call)
    return { items: body, nextCursor: nextCursorOf(headers) }
  }

  async #json<T>(call: Call): Promise<{ body: T; headers: Headers; status: number }> {
    const response = await this.#send(call)
    return {
      body: (await response.json()) as T,
      headers: response.headers,
      status: response.status,
    }
  }

  /** Sends a call, trying again as `retries` allows; resolves with a 2XX or 304 response. */
  async #send(call: Call): Promise<Response> {
    const init: RequestInit = {
      method: call.method,
      headers: {
        accept: 'application/json',
        ...this.#auth(),
        ...(call.body !== undefined && { 'content-type': 'application/json' }),
        ...call.headers,
      },
      ...(call.body !== undefined && { body: JSON.stringify(call.body) }),
      ...(call.signal && { signal: call.signal }),
    }
    const url = this.#url(call.path, call.query)
    for (let attempt = 0; ; attempt += 1) {
      // note: at random between half and all of it, so that many clients do not come back at once
      const doubled = this.#retryDelayMs * 2 ** attempt
      const backoff = Math.min(doubled / 2 + (Math.random() * doubled) / 2, this.#maxRetryDelayMs)
      let response: Response
      try {
        response = await this.#fetch(url, init)
        // note: read here, where an answer cut halfway is a network error, tried again as one
        if (!call.stream)
          response = new Response(
            response.status === 204 || response.status === 304
              ? null
              : await response.arrayBuffer(),
            response,
          )
      } catch (err) {
        if (!call.safe || attempt >= this.#retries || call.signal?.aborted) throw err
        await this.#sleep(backoff, call.signal)
        continue
      }
      if (response.ok || response.status === 304) return response
      if (attempt > 0 && call.goneMeansDone && response.status === 404) return response
      const error = await this.#error(response)
      const retryable = response.status === 429 || (call.safe && response.status >= 500)
      if (!retryable || attempt >= this.#retries) throw error
      const asked = error.retryAfter === null ? backoff : error.retryAfter * 1000
      await this.#sleep(Math.min(asked, this.#maxRetryDelayMs), call.signal)
    }
  }

  async #error(response: Response): Promise<StatusdError> {
    const text = await response.text()
    let body: unknown = null
    try {
      body = JSON.parse(text)
    } catch {
      // not statusd's JSON (a proxy's page): the status code is all there is
    }
    const errorBody = body !== null && typeof body === 'object' && 'errorCode' in body ? body : null
    return new StatusdError(
      response.status,
      errorBody as ConstructorParameters<typeof StatusdError>[1],
      {
        requestId: response.headers.get('x-request-id'),
        retryAfter: retryAfterOf(response.headers),
      },
    )
  }
}
