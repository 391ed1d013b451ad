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

export interface RequestOptions {
  body?: unknown
  headers?: Record<string, string>
  signal?: AbortSignal
}

/** Calls the API; resolves with the parsed JSON (undefined for 204), rejects with ApiError. */
export async function api<T = unknown>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    })
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    throw new ApiError(0, {
      message: 'The server cannot be reached. Check the connection and try again.',
      errorCode: 'offline',
    })
  }
  if (response.status === 204) return undefined as T
  const text = await response.text()
  let body: unknown
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  if (!response.ok) {
    const error = new ApiError(
      response.status,
      (body ?? {}) as ConstructorParameters<typeof ApiError>[1],
    )
    if (response.status === 401 && !path.startsWith('/v1/auth/')) onSignedOut()
    throw error
  }
  return body as T
}

/** `/v1/status/<id>` with every segment escaped. */
export const apiPath = (strings: TemplateStringsArray, ...values: (string | number)[]): string =>
  strings.reduce(
    (out, s, i) => out + s + (i < values.length ? encodeURIComponent(String(values[i])) : ''),
    '',
  )

/** One page of a paged list (docs/api.md#list-your-statuses): its items and the next page's path. */
export async function apiPage<T>(path: string): Promise<{ items: T[]; next: string | null }> {
  const response = await fetch(path, {
    headers: { accept: 'application/json' },
    credentials: 'same-origin',
  }).catch(() => {
    throw new ApiError(0, {
      message: 'The server cannot be reached. Check the connection and try again.',
      errorCode: 'offline',
    })
  })
  const body = await response.json().catch(() => undefined)
  if (!response.ok) {
    if (response.status === 401) onSignedOut()
    throw new ApiError(response.status, body ?? {})
  }
  const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')
  const next = link?.[1] ? new URL(link[1], location.href) : null
  return { items: body as T[], next: next ? next.pathname + next.search : null }
}
