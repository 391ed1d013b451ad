import { randomUUID } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import type { ClientSettings } from './client-config.ts'

/**
 * A request the server refused (its `message` and `errorCode`), or one that never got an
 * answer: printed as statusd's error, exit code 1 (docs/cli.md#exit-codes).
 */
export class ClientError extends Error {
  override name = 'ClientError'
  readonly errorCode: string | undefined
  readonly requestId: string | undefined
  readonly status: number | undefined
  readonly exitCode = 1

  constructor(message: string, errorCode?: string, requestId?: string, status?: number) {
    super(message)
    this.errorCode = errorCode
    this.requestId = requestId
    this.status = status
  }

  toJSON() {
    return {
      error: this.message,
      ...(this.errorCode !== undefined && { errorCode: this.errorCode }),
      ...(this.status !== undefined && { status: this.status }),
      ...(this.requestId !== undefined && { requestId: this.requestId }),
    }
  }
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>

/** Waits `ms`, or less when `signal` aborts (then it resolves: the caller checks the signal). */
export const realSleep: Sleep = (ms, signal) =>
  delay(ms, undefined, signal ? { signal } : {}).catch(() => {})

/** How many times a request is sent at most, the first included; and the first wait. */
export const ATTEMPTS = 4
const FIRST_WAIT_MS = 500
const MOST_WAIT_MS = 10_000

/**
 * The wait before attempt `n + 1`: the server's Retry-After when it gives one (bounded),
 * else 0.5 s doubling, with jitter so that many clients do not come back at once.
 */
export function backoff(attempt: number, retryAfter?: string | null): number {
  const seconds = retryAfter ? Number(retryAfter) : Number.NaN
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MOST_WAIT_MS)
  const base = Math.min(FIRST_WAIT_MS * 2 ** attempt, MOST_WAIT_MS)
  return base / 2 + Math.random() * (base / 2)
}

/** Answers worth another try: the server was busy or failed, the request may not have run. */
export const retryable = (status: number) => status === 429 || status >= 500

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  body?: unknown
  /** The API key to send; the settings' one when not given. */
  apiKey?: string
}

export interface Answer<T> {
  status: number
  body: T
  headers: Headers
}

/** What an error body of the API holds (docs/api.md#errors). */
interface ErrorBody {
  message?: string
  errorCode?: string
  requestId?: string
  errors?: { field?: string; message?: string }[]
}

/**
 * One API call with retries: on a network error, a 5xx or a 429 it is sent again, up to
 * ATTEMPTS times in all. A write carries one `Idempotency-Key` for all its attempts, so a
 * write that reached the server but whose answer was lost is answered from the server's
 * record the next time, not applied twice (docs/api.md#safe-retries-idempotency-key).
 */
export async function call<T>(
  settings: ClientSettings,
  request: Call,
  sleep: Sleep,
  signal?: AbortSignal,
): Promise<Answer<T>> {
  const apiKey = request.apiKey ?? settings.apiKey
  const headers: Record<string, string> = { accept: 'application/json' }
  if (apiKey) headers.authorization = `Bearer ${apiKey}`
  if (request.body !== undefined) headers['content-type'] = 'application/json'
  if (request.method !== 'GET') headers['idempotency-key'] = randomUUID()
  const url = `${settings.url}${request.path}`
  for (let attempt = 0; ; attempt++) {
    let res: Response
    let text: string
    try {
      res = await fetch(url, {
        method: request.method,
        headers,
        ...(request.body !== undefined && { body: JSON.stringify(request.body) }),
        ...(signal && { signal }),
      })
      // note: read here, where a connection lost halfway through the answer is a network error
      text = await res.text()
    } catch (error) {
      if (signal?.aborted) throw error
      if (attempt + 1 >= ATTEMPTS)
        throw new ClientError(`cannot reach ${settings.url}: ${networkReason(error)}`)
      await sleep(backoff(attempt), signal)
      continue
    }
    if (retryable(res.status) && attempt + 1 < ATTEMPTS) {
      await sleep(backoff(attempt, res.headers.get('retry-after')), signal)
      continue
    }
    if (!res.ok) throw refusal(res, text)
    return {
      status: res.status,
      body: (text ? JSON.parse(text) : undefined) as T,
      headers: res.headers,
    }
  }
}

/** The server's refusal as a ClientError: its message (with the fields it names) and code. */
export function refusal(res: Response, text: string): ClientError {
  let body: ErrorBody = {}
  try {
    body = JSON.parse(text) as ErrorBody
  } catch {
    // not the API's JSON (a proxy's page): the status line says what happened
  }
  const fields = (body.errors ?? [])
    .map((e) => [e.field, e.message].filter(Boolean).join(': '))
    .filter(Boolean)
  const message =
    (body.message ?? `${res.status} ${res.statusText}`.trim()) +
    (fields.length ? ` (${fields.join('; ')})` : '')
  return new ClientError(message, body.errorCode, body.requestId, res.status)
}

/** Why fetch failed, in a few words: undici hides the reason (ECONNREFUSED …) in `cause`. */
export function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (error as Error).message
}
