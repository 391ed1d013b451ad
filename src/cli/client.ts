import { setTimeout as delay } from 'node:timers/promises'
import type { ClientSettings } from './client-config.ts'
import { StatusdClient, type StatusdError } from './statusd-client.ts'

// note: not `import { STATUS_CODES } from 'node:http'`: an ESM import of node:http reads every
// export, and its lazy WebSocket getters load Node's whole fetch stack (`statusd serve` loads
// this file too)
const { STATUS_CODES } = process.getBuiltinModule('node:http')

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

  /** The server's refusal: its message with the fields it names, its code and request id. */
  static of(error: StatusdError): ClientError {
    const fields = error.errors.map((e) => [e.field, e.message].filter(Boolean).join(': '))
    const message =
      (error.errorCode === null
        ? `${error.status} ${STATUS_CODES[error.status] ?? ''}`.trim()
        : error.message) + (fields.length ? ` (${fields.join('; ')})` : '')
    return new ClientError(
      message,
      error.errorCode ?? undefined,
      error.requestId ?? undefined,
      error.status,
    )
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

/** Why fetch failed, in a few words: undici hides the reason (ECONNREFUSED …) in `cause`. */
export function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? (error as Error).message
}

/**
 * The library's client for the CLI's settings (`apiKey: null`: without a key). A request is
 * sent up to 4 times in all after a network error, a 5xx or a 429, the pause doubling from
 * 0.5 s or what the server's Retry-After asks, at most 10 s; a write carries one
 * Idempotency-Key on every attempt (docs/cli.md#safe-retries). A server that cannot be
 * reached is a ClientError that names it.
 */
export function clientOf(
  settings: ClientSettings,
  sleep: Sleep,
  apiKey: string | null | undefined = settings.apiKey,
): StatusdClient {
  return new StatusdClient({
    url: settings.url,
    ...(apiKey && { apiKey }),
    retries: 3,
    retryDelayMs: 500,
    maxRetryDelayMs: 10_000,
    sleep,
    fetch: (input, init) =>
      fetch(input, init).catch((error: unknown) => {
        if (init?.signal?.aborted) throw error
        throw new ClientError(`cannot reach ${settings.url}: ${networkReason(error)}`)
      }),
  })
}
