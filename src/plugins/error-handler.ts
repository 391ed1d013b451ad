import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify'
import fp from 'fastify-plugin'
import { storageErrorKind } from '../db/storage-error.ts'
import {
  ApiError,
  emptyBody,
  type FieldError,
  internalError,
  invalidJson,
  notFound,
  payloadTooLarge,
  unavailable,
  unsupportedMediaType,
  validationError,
} from '../lib/errors.ts'
import { redactRequestUrl } from '../lib/redact.ts'
import { BODY_FIELD, PATTERN_MESSAGE, READ_ONLY_PROPERTIES } from '../lib/schema.ts'

export const BODY_LIMIT = 16 * 1024

interface AjvError {
  instancePath: string
  /** Where the failed keyword is in the schema, as a JSON pointer (`#/properties/name/pattern`). */
  schemaPath: string
  keyword: string
  params: Record<string, unknown>
  message?: string
}

/** The route's schemas by request part (body, querystring, …), as the route declared them. */
type RouteSchemas = Record<string, unknown> | undefined

/**
 * The schema that holds the failed keyword (its parent in `schemaPath`), for the messages a
 * schema carries beside it (lib/schema.ts: PATTERN_MESSAGE, READ_ONLY_PROPERTIES).
 */
function schemaOf(e: AjvError, schema: unknown): Record<PropertyKey, unknown> | undefined {
  const steps = e.schemaPath.replace(/^#\/?/, '').split('/').slice(0, -1)
  let at = schema
  for (const step of steps) {
    if (at === null || typeof at !== 'object') return undefined
    at = (at as Record<string, unknown>)[step.replace(/~1/g, '/').replace(/~0/g, '~')]
  }
  return at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>) : undefined
}

const TYPE_WORDS: Record<string, string> = {
  object: 'a JSON object',
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  array: 'an array',
}

const fieldOf = (e: AjvError): string =>
  e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.')

/** One readable message per Ajv error, naming the property. */
function toFieldError(e: AjvError, part: string, schema: unknown): FieldError {
  // a body that is one field (plain text) names that field, not the body
  const field =
    fieldOf(e) ||
    ((schema as Record<PropertyKey, unknown> | undefined)?.[BODY_FIELD] as string) ||
    ''
  const p = e.params
  switch (e.keyword) {
    case 'additionalProperties': {
      const name = String(p.additionalProperty)
      const where = field ? `${field}.${name}` : name
      const readOnly = schemaOf(e, schema)?.[READ_ONLY_PROPERTIES] as Set<string> | undefined
      return readOnly?.has(name)
        ? { field: where, message: 'is read-only' }
        : { field: where, message: 'is not a known property' }
    }
    case 'required': {
      // a nested property is named by its path (`config.token`), as every other error
      const parent = fieldOf(e)
      const name = String(p.missingProperty)
      return { field: parent ? `${parent}.${name}` : name, message: 'is required' }
    }
    case 'type':
      if (!field) return { field: part, message: `must be ${TYPE_WORDS[String(p.type)] ?? p.type}` }
      // bodies are never converted; query strings are, so the note would mislead there
      return {
        field,
        message: `must be ${TYPE_WORDS[String(p.type)] ?? p.type}${part === 'body' ? ' (no null, no conversion)' : ''}`,
      }
    case 'minLength':
      return { field, message: `must be at least ${p.limit} characters` }
    case 'maxLength':
      return { field, message: `must be at most ${p.limit} characters` }
    case 'minimum':
      return { field, message: `must be at least ${p.limit}` }
    case 'maximum':
      return { field, message: `must be at most ${p.limit}` }
    case 'enum':
      return {
        field,
        message: `must be one of: ${(p.allowedValues as unknown[]).map(String).join(', ')}`,
      }
    case 'maxItems':
      return { field: field || part, message: `must have at most ${p.limit} entries` }
    case 'minItems':
      return { field: field || part, message: `must have at least ${p.limit} entries` }
    case 'uniqueItems':
      return { field: field || part, message: 'must not name an entry twice' }
    case 'discriminator': {
      // an unknown kind: the kinds there are, from the schema's branches
      const tag = String(p.tag)
      const branches = (schemaOf(e, schema)?.oneOf ?? []) as {
        properties?: Record<string, { const?: unknown }>
      }[]
      const kinds = branches.map((b) => b.properties?.[tag]?.const).filter((k) => k !== undefined)
      const where = field ? `${field}.${tag}` : tag
      return kinds.length > 0
        ? { field: where, message: `must be one of: ${kinds.map(String).join(', ')}` }
        : { field: where, message: 'is not one this service offers' }
    }
    case 'pattern':
      return {
        field,
        message: (schemaOf(e, schema)?.[PATTERN_MESSAGE] as string) ?? 'has an invalid format',
      }
    default:
      return { field: field || part, message: e.message ?? 'is invalid' }
  }
}

/**
 * Turns a Fastify validation failure into the 400 of docs/api.md#errors (emptyBody or
 * validationError).
 */
function fromValidation(err: FastifyError, schemas: RouteSchemas): ApiError {
  const part = err.validationContext ?? 'body'
  const schema = schemas?.[part]
  const errors = (err.validation ?? []) as AjvError[]
  if (part === 'body' && errors.length > 0 && errors.every((e) => e.keyword === 'minProperties'))
    return emptyBody()
  // a nullable property (a union with null, such as a palette) fails both branches: its
  // "must be null" and "must match a schema in anyOf" say nothing the other branch's errors
  // do not, so they go, and a wrong type reads "must be an array or null"
  const nullable = new Set(
    errors.filter((e) => e.keyword === 'type' && e.params.type === 'null').map(fieldOf),
  )
  const seen = new Set<string>()
  const fields: FieldError[] = []
  for (const e of errors) {
    if (e.keyword === 'minProperties') continue
    if (nullable.has(fieldOf(e)) && (e.keyword === 'anyOf' || e.params.type === 'null')) continue
    const fe =
      e.keyword === 'type' && nullable.has(fieldOf(e))
        ? {
            field: fieldOf(e),
            message: `must be ${TYPE_WORDS[String(e.params.type)] ?? e.params.type} or null`,
          }
        : toFieldError(e, part, schema)
    const id = `${fe.field}\0${fe.message}`
    if (!seen.has(id)) fields.push(fe)
    seen.add(id)
  }
  return validationError(
    fields,
    part === 'body' ? 'Request body is invalid' : `Request ${part} is invalid`,
  )
}

/**
 * Maps any thrown error to the ApiError the client sees; a validation failure is worded with
 * the messages the route's schemas carry.
 */
export function toApiError(err: unknown, schemas?: RouteSchemas, bodyLimit = BODY_LIMIT): ApiError {
  if (err instanceof ApiError) return err
  const e = err as FastifyError
  if (e?.validation) return fromValidation(e, schemas)
  switch (e?.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return unsupportedMediaType()
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge(bodyLimit)
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return emptyBody()
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidJson()
    case 'FST_ERR_BAD_URL':
      return new ApiError(400, 'validationError', 'Request URL is malformed')
  }
  // note: Fastify reports a `__proto__` key as a SyntaxError too; both are invalidJson
  if (e instanceof SyntaxError || e?.name === 'SyntaxError') return invalidJson()
  const storage = storageErrorKind(err)
  if (storage === 'unavailable') return unavailable()
  // text the engine cannot store (NUL): input no stored row can match, not a fault
  if (storage === 'unstorable')
    return new ApiError(
      400,
      'validationError',
      'Request holds a character that cannot be stored (NUL)',
    )
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500
  if (status === 404) return notFound()
  if (status === 413) return payloadTooLarge(bodyLimit)
  if (status === 415) return unsupportedMediaType()
  if (status >= 400 && status < 500)
    return new ApiError(status, 'validationError', 'Request is invalid')
  return internalError()
}

/**
 * Logs a server-side failure with its details (storage that cannot answer at level 40, the
 * rest at 50) and sets the error's own headers (`Retry-After`); answers the ApiError to send.
 */
export function prepareError(
  err: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  what = 'request failed',
): ApiError {
  // the route's own body limit, when it has a smaller one (a plain-text value)
  const apiError = toApiError(
    err,
    request.routeOptions?.schema as RouteSchemas,
    request.routeOptions?.bodyLimit,
  )
  if (apiError.statusCode >= 500) {
    if (apiError.errorCode === 'unavailable') request.log.warn({ err }, 'storage unavailable')
    else request.log.error({ err }, what)
  }
  if (apiError.headers) reply.headers(apiError.headers)
  return apiError
}

/**
 * Sends an error in the shape of docs/api.md#errors; logs server-side failures with their details.
 */
export function sendError(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = prepareError(err, request, reply)
  reply
    .code(apiError.statusCode)
    .type('application/json; charset=utf-8')
    .send({
      message: apiError.message,
      errorCode: apiError.errorCode,
      ...(apiError.errors && { errors: apiError.errors }),
      requestId: request.id,
    })
}

/**
 * onRequest hook: an unknown route is answered by its not-found handler (the API's, or the
 * share pages' HTML one under /s) before its body is read, so it is 404 whatever it carries
 * (docs/api.md#order-of-checks). note: Fastify runs a not-found route's whole lifecycle,
 * body parsing included (415, 400, 413) before the handler.
 */
function answerUnknownRoutesFirst(
  this: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  // the route of an unmatched request is the not-found handler of its prefix
  if (request.is404) void request.routeOptions.handler.call(this, request, reply)
  else done()
}

/**
 * Where a browser's unknown address goes: the app's page (its not-found screen), set by the
 * app's routes once they have loaded the app (web/app.routes.ts). Null: JSON as for the API.
 */
export interface NotFoundPage {
  send: ((request: FastifyRequest, reply: FastifyReply) => FastifyReply) | null
}

/**
 * A browser opening an address of ours that does not exist (docs/app.md#screens): a page
 * load (GET or HEAD asking for HTML) outside the API. API paths (/v1) keep their JSON 404
 * whatever they accept, and so does any request that does not ask for HTML (curl, fetch).
 */
const wantsPage = (request: FastifyRequest): boolean =>
  (request.method === 'GET' || request.method === 'HEAD') &&
  !/^\/v1(\/|$|\?)/.test(request.url) &&
  /\btext\/html\b/.test(String(request.headers.accept ?? ''))

declare module 'fastify' {
  interface FastifyInstance {
    /** Where a browser's unknown address goes (NotFoundPage); the app's routes set it. */
    notFoundPage: NotFoundPage
  }
}

/** The one error handler and not-found handler of the API. */
export const errorHandlerPlugin = fp(
  async (app: FastifyInstance) => {
    const notFoundPage: NotFoundPage = { send: null }
    app.decorate('notFoundPage', notFoundPage)
    app.addHook('onRequest', answerUnknownRoutesFirst)
    app.setErrorHandler((err, request, reply) => sendError(err, request, reply))
    app.setNotFoundHandler((request, reply) =>
      notFoundPage.send && wantsPage(request)
        ? notFoundPage.send(request, reply)
        : sendError(
            // note: a key pasted into a path comes back masked, as in the logs
            notFound(
              `No route ${request.method} ${redactRequestUrl(request.url.split('?')[0] ?? '').slice(0, 200)}`,
            ),
            request,
            reply,
          ),
    )
  },
  { name: 'error-handler' },
)
