import type { ErrorBody, ErrorCode } from './types.ts'

/**
 * A response the server refused (4XX) or failed (5XX), after any retries. `errorCode` is the
 * stable code to branch on (docs/api.md#errors); it is null when the answer was not statusd's
 * JSON error body (a proxy's HTML page, say).
 */
export class StatusdError extends Error {
  override readonly name = 'StatusdError'
  /** The HTTP status code. */
  readonly status: number
  readonly errorCode: ErrorCode | null
  /** Per-field details (validation and plan errors). */
  readonly errors: { field: string; message: string }[]
  /** The request id the server logged this request under (`x-request-id`). */
  readonly requestId: string | null
  /** Seconds the server asked to wait (`Retry-After`, on 429 and 503), if it said. */
  readonly retryAfter: number | null

  constructor(
    status: number,
    body: Partial<ErrorBody> | null,
    headers: { requestId: string | null; retryAfter: number | null },
  ) {
    super(body?.message ?? `HTTP ${status}`)
    this.status = status
    this.errorCode = body?.errorCode ?? null
    this.errors = body?.errors ?? []
    this.requestId = body?.requestId ?? headers.requestId
    this.retryAfter = headers.retryAfter
  }
}
