import { signal } from '@preact/signals'
import { t } from './i18n.ts'

// The app's one way to the API (docs/api.md): same origin, the session cookie, JSON in and
// out. A failure becomes an ApiError carrying the API's own error body, so screens show the
// server's messages (per field where it names one) instead of inventing their own.

export interface FieldError {
  field: string
  message: string
}

export class ApiError extends Error {
  readonly status: number
  readonly errorCode: string
  readonly errors: FieldError[]

  constructor(
    status: number,
    body: { message?: string; errorCode?: string; errors?: FieldError[] },
  ) {
    super(body.message ?? `The server answered ${status}`)
    this.name = 'ApiError'
    this.status = status
    this.errorCode = body.errorCode ?? 'unknown'
    this.errors = body.errors ?? []
  }

  /** The message for one field (`value`, `name`, …), if the server named it. */
  fieldMessage(field: string): string | undefined {
    return this.errors.find((e) => e.field === field || e.field === `/${field}`)?.message
  }
}

/** Called when the server says the session is gone (401), so the app can show sign-in. */
let onSignedOut: () => void = () => {}
export const whenSignedOut = (callback: () => void): void => {
  onSignedOut = callback
}
/** Tells the app the session is gone, learnt other than by `api` (a live stream refused 401). */
export const signedOutElsewhere = (): void => onSignedOut()

export interface RequestOptions {
  body?: unknown
  headers?: Record<string, string>
  signal?: AbortSignal
}

/**
 * While the server answers 429 `rateLimited` (docs/api.md#rate-limits): until when it asked
 * the app to wait (ms since the epoch), for the shell to say so in words; null otherwise.
 */
export const rateLimitedUntil = signal<number | null>(null)

/** Seconds to wait from a 429's Retry-After (seconds or an HTTP date); 60 when it names none. */
function retryAfterSeconds(response: Response): number {
  const header = response.headers.get('retry-after') ?? ''
  const seconds = Number(header)
  if (header !== '' && Number.isFinite(seconds)) return Math.max(1, Math.ceil(seconds))
  const at = Date.parse(header)
  return Number.isNaN(at) ? 60 : Math.max(1, Math.ceil((at - Date.now()) / 1000))
}

const waitFor = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(timer)
      reject(signal.reason)
    })
  })

const offline = () =>
  new ApiError(0, {
    message: t('app.api.offline'),
    errorCode: 'offline',
  })

/**
 * One request, sent again after the wait a 429 names when it only reads (GET): reading twice
 * changes nothing, while a write is left to the person, who sees the wait in its error.
 */
async function send(method: string, path: string, init: RequestInit): Promise<Response> {
  for (;;) {
    let response: Response
    try {
      response = await fetch(path, { ...init, method, credentials: 'same-origin' })
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error
      throw offline()
    }
    if (response.status !== 429) {
      if (rateLimitedUntil.value !== null && rateLimitedUntil.value <= Date.now())
        rateLimitedUntil.value = null
      return response
    }
    const seconds = retryAfterSeconds(response)
    const until = Date.now() + seconds * 1000
    rateLimitedUntil.value = Math.max(rateLimitedUntil.value ?? 0, until)
    if (method !== 'GET') return response
    await waitFor(seconds * 1000, init.signal ?? undefined)
  }
}

/** Calls the API; resolves with the parsed JSON (undefined for 204), rejects with ApiError. */
export async function api<T = unknown>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const response = await send(method, path, {
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal ?? null,
  })
  if (response.status === 204) return undefined as T
  const text = await response.text()
  let body: unknown
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  if (!response.ok) {
    const error = failure(response, body)
    if (response.status === 401 && !path.startsWith('/v1/auth/')) onSignedOut()
    throw error
  }
  return body as T
}

/** The ApiError of a failed answer; a 429 says in words how long to wait. */
function failure(response: Response, body: unknown): ApiError {
  const fields = (body ?? {}) as ConstructorParameters<typeof ApiError>[1]
  if (response.status === 429)
    return new ApiError(429, {
      ...fields,
      message: t('app.api.tooManyRequests', { seconds: retryAfterSeconds(response) }),
    })
  return new ApiError(response.status, fields)
}

/** `/v1/status/<id>` with every segment escaped. */
export const apiPath = (strings: TemplateStringsArray, ...values: (string | number)[]): string =>
  strings.reduce(
    (out, s, i) => out + s + (i < values.length ? encodeURIComponent(String(values[i])) : ''),
    '',
  )

/** One page of a paged list (docs/api.md#list-your-statuses): its items and the next page's path. */
export async function apiPage<T>(
  path: string,
  signal?: AbortSignal,
): Promise<{ items: T[]; next: string | null }> {
  const response = await send('GET', path, {
    headers: { accept: 'application/json' },
    signal: signal ?? null,
  })
  const body = await response.json().catch(() => undefined)
  if (!response.ok) {
    if (response.status === 401) onSignedOut()
    throw failure(response, body)
  }
  const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')
  const next = link?.[1] ? new URL(link[1], location.href) : null
  return { items: body as T[], next: next ? next.pathname + next.search : null }
}
