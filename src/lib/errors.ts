/**
 * Every error code the API can answer with (docs/api.md#errors); the OpenAPI document's
 * `errorCode` enum is this list.
 */
export const ERROR_CODES = [
  'invalidJson',
  'emptyBody',
  'validationError',
  'invalidStatusKey',
  'unauthorized',
  'invalidCredentials',
  'planFeatureUnavailable',
  'planLimitReached',
  'notVerified',
  'emailNotVerified',
  'forbidden',
  'insufficientScope',
  'csrfRejected',
  'notFound',
  'conflict',
  'gone',
  'preconditionFailed',
  'payloadTooLarge',
  'unsupportedMediaType',
  'idempotencyKeyReused',
  'rateLimited',
  'tooManyStreams',
  'serverBusy',
  'tooManyRequests',
  'requestTimeout',
  'requestHeadersTooLarge',
  'internalError',
  'emailUnavailable',
  'unavailable',
] as const

/** One of ERROR_CODES: a union, so a typo does not compile. */
export type ErrorCode = (typeof ERROR_CODES)[number]

export interface FieldError {
  field: string
  message: string
}

/**
 * A usage error of the services outside the API's rules (the admin commands' input): shown
 * to the operator as it is. The API maps the few it can meet to its own errors.
 */
export class UserInputError extends Error {
  override name = 'UserInputError'
}

/** An error the API answers with: HTTP status, stable code, optional per-field details. */
export class ApiError extends Error {
  readonly statusCode: number
  readonly errorCode: ErrorCode
  readonly errors: FieldError[] | undefined
  readonly headers: Record<string, string> | undefined

  constructor(
    statusCode: number,
    errorCode: ErrorCode,
    message: string,
    errors?: FieldError[],
    headers?: Record<string, string>,
  ) {
    super(message)
    this.name = 'ApiError'
    this.statusCode = statusCode
    this.errorCode = errorCode
    this.errors = errors
    this.headers = headers
  }
}

export const invalidJson = (detail = 'Request body is not valid JSON') =>
  new ApiError(400, 'invalidJson', detail)
export const emptyBody = (detail = 'Request body must contain at least one updatable property') =>
  new ApiError(400, 'emptyBody', detail)
export const validationError = (errors: FieldError[], message = 'Request is invalid') =>
  new ApiError(400, 'validationError', message, errors)
export const invalidStatusKey = () =>
  new ApiError(
    400,
    'invalidStatusKey',
    'Status key must be 1 to 100 characters from A-Z a-z 0-9 - . _ ~',
  )
export const unauthorized = (message = 'A valid API key is required') =>
  // RFC 9110 §11.6.1: a 401 names the scheme that would succeed
  new ApiError(401, 'unauthorized', message, undefined, {
    'www-authenticate': 'Bearer realm="statusd"',
  })
export const invalidCredentials = () =>
  new ApiError(401, 'invalidCredentials', 'E-mail address or password is wrong')
export const planFeatureUnavailable = (feature: string, field: string) =>
  new ApiError(402, 'planFeatureUnavailable', `Your plan does not include ${feature}`, [
    { field, message: `requires a plan with ${feature}` },
  ])
export const planLimitReached = (limit: number, what = 'statuses') =>
  new ApiError(402, 'planLimitReached', `Your plan allows at most ${limit} ${what}`)
export const notVerified = () =>
  new ApiError(403, 'notVerified', 'This operation requires a verified user')
/**
 * 403 for an account whose e-mail address is neither confirmed nor vouched for, asking for a
 * lasting credential or for something that reaches other people (docs/accounts.md#e-mail).
 */
export const emailNotVerified = (
  message = 'Confirm your e-mail address first: follow the link mailed to you (POST /v1/user/email/verification sends a new one)',
) => new ApiError(403, 'emailNotVerified', message)
/**
 * 403 for a credential whose scopes or statuses do not reach what was asked
 * (docs/accounts.md#scoped-keys): `field` is what falls short (`scopes`, `statusIds`), the
 * message names the scope or status missing.
 */
export const insufficientScope = (message: string, field = 'scopes', detail = message) =>
  new ApiError(403, 'insufficientScope', message, [{ field, message: detail }])
export const forbidden = (message = 'You may not change this status', errors?: FieldError[]) =>
  new ApiError(403, 'forbidden', message, errors)
export const csrfRejected = () =>
  new ApiError(
    403,
    'csrfRejected',
    "A request signed in by cookie must come from the service's own pages (Origin)",
  )
export const conflict = (message: string) => new ApiError(409, 'conflict', message)
export const notFound = (message = 'Not found') => new ApiError(404, 'notFound', message)
export const preconditionFailed = () =>
  new ApiError(
    412,
    'preconditionFailed',
    'The status does not meet the request precondition (If-Match / If-None-Match)',
  )
export const payloadTooLarge = (limit: number) =>
  new ApiError(413, 'payloadTooLarge', `Request body is larger than ${limit} bytes`)
export const unsupportedMediaType = (message = 'Request body must be sent as application/json') =>
  new ApiError(415, 'unsupportedMediaType', message)
export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError(429, 'rateLimited', 'Too many requests', undefined, {
    'retry-after': String(retryAfterSeconds),
  })
export const tooManyStreams = (limit: number, retryAfterSeconds: number) =>
  new ApiError(
    429,
    'tooManyStreams',
    `Too many open event streams: at most ${limit} per client`,
    undefined,
    { 'retry-after': String(retryAfterSeconds) },
  )
/**
 * The service holds as many live streams as its file descriptors allow
 * (docs/operations.md#server-wide-stream-capacity). The connection closes with the answer:
 * a refused client must not keep holding a descriptor while it waits.
 */
export const serverBusy = (retryAfterSeconds: number) =>
  new ApiError(
    503,
    'serverBusy',
    'The server holds as many open event streams as it can; try again shortly',
    undefined,
    { 'retry-after': String(retryAfterSeconds), connection: 'close' },
  )

/**
 * 429 when the server is too busy with work of this kind to take more now (the password hash
 * pool's queue is full, docs/accounts.md#password-hashing): not a limit of the caller's own.
 */
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new ApiError(429, 'tooManyRequests', message, undefined, {
    'retry-after': String(retryAfterSeconds),
  })
export const unavailable = (message = 'Storage is unavailable, try again shortly') =>
  new ApiError(503, 'unavailable', message, undefined, {
    'retry-after': '5',
  })
export const internalError = () => new ApiError(500, 'internalError', 'Internal Server Error')
