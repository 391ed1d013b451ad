import { STATUS_KEY_PATTERN } from '../modules/statuses/statuses.schemas.ts'
import type { RouteFacts } from './route-facts.ts'

/**
 * The headers of the API in the OpenAPI document: the request headers it honours
 * (`Idempotency-Key`, `If-Match`, `If-None-Match`) and the response headers it sends
 * (`ETag`, `Location`, `Link`, the rate-limit headers, …), so that a client generated from
 * the document can page, retry safely and write conditionally (docs/api.md).
 *
 * note: added to the generated document only. Declared in the route schemas, the request
 * headers would be validated by Ajv on every request (the hot path) with the general
 * validationError instead of their own checks, and the response headers would reach
 * fast-json-stringify's schemas.
 */

const string = { type: 'string' }
const integer = { type: 'integer', minimum: 0 }

const PARAMETERS = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes a retry safe: a retry within 24 hours with the same key, method, path and body gets the first response replayed (with `Idempotent-Replayed: true`); another request with the key gets 422 idempotencyKeyReused.',
    schema: { type: 'string', pattern: '^[!-~]{1,255}$' },
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      "Write only if the status's current ETag is listed (`*`: only if it exists; a POST by key then updates only); otherwise 412 preconditionFailed and nothing changes.",
    schema: string,
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description:
      'On a read: 304 Not Modified while the ETag matches (`W/` tags compare too). On a write: 412 when it matches; `*` on a POST by key makes it create-only.',
    schema: string,
  },
}

const HEADERS = {
  ETag: {
    description: 'Strong entity tag of the status; send it back in If-None-Match or If-Match.',
    schema: string,
  },
  Location: {
    description:
      'The path (absolute with PUBLIC_URL) of what was created (201), or where a browser goes next (303).',
    schema: string,
  },
  Link: {
    description:
      'The next page, `<…>; rel="next"` (RFC 8288), on every page but the last; only with `limit`.',
    schema: string,
  },
  IdempotentReplayed: {
    description: '`true` when this is a replay of the response stored under the Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  RateLimitLimit: {
    description:
      "Requests per minute: the user's (on counted requests of limited plans), or on anonymous routes the client address's (`ANON_REQUESTS_PER_MINUTE`).",
    schema: integer,
  },
  RateLimitRemaining: { description: 'Requests left in the current window.', schema: integer },
  RateLimitReset: { description: 'Seconds until the window ends.', schema: integer },
  RetryAfter: {
    description:
      'On 429 rateLimited or tooManyStreams and 503 unavailable or serverBusy: seconds to wait before retrying.',
    schema: integer,
  },
  WWWAuthenticate: { description: 'On 401: how to authenticate.', schema: string },
  RequestId: {
    description:
      "The request id (the caller's own `x-request-id` when it is acceptable); error bodies repeat it as `requestId`.",
    schema: string,
  },
  AccessControlAllowOrigin: {
    description: 'Public views and private share links may be read from any origin.',
    schema: string,
  },
}

type Header = keyof typeof HEADERS
type Ref = { $ref: string }
interface Response {
  headers?: Record<string, Ref>
}
interface Parameter {
  name?: string
  in?: string
  schema?: object
  description?: string
}
interface Operation {
  [ROUTE_FACTS]?: RouteFacts
  description?: string
  [REQUIRED_SCOPE]?: string
  requestBody?: { required?: boolean }
  security?: unknown[]
  parameters?: (Parameter | Ref)[]
  responses?: Record<string, Response & { description?: string; content?: object }>
}

/**
 * The extension naming the scope an API key needs for an operation
 * (docs/accounts.md#scoped-keys), for client generators and readers alike.
 */
export const REQUIRED_SCOPE = 'x-required-scope'

/**
 * States an operation's scope (docs/accounts.md#scoped-keys): in `x-required-scope`, in its
 * description, and as a documented 403 whose codes include insufficientScope.
 */
function documentScope(operation: Operation, scope: string): void {
  operation[REQUIRED_SCOPE] = scope
  const sentence = `Scope: an API key needs \`${scope}\` (403 insufficientScope without it); a session needs none.`
  operation.description =
    operation.description === undefined ? sentence : `${operation.description}\n\n${sentence}`
  operation.responses ??= {}
  operation.responses['403'] ??= {
    description: `Refused: \`insufficientScope\` (an API key without \`${scope}\`, or beyond its statuses), \`notVerified\` or \`forbidden\`.`,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  }
}

const param = (name: keyof typeof PARAMETERS): Ref => ({
  $ref: `#/components/parameters/${name}`,
})

/**
 * The key under which a route's facts (route-facts.ts) reach its operation: @fastify/swagger
 * copies `x-` keys of a route schema to the operation. Read and removed by documentHeaders.
 */
export const ROUTE_FACTS = 'x-route-facts'

/** Each header's name on the wire. */
const HEADER_NAMES: Record<Header, string> = {
  ETag: 'ETag',
  Location: 'Location',
  Link: 'Link',
  IdempotentReplayed: 'Idempotent-Replayed',
  RateLimitLimit: 'x-ratelimit-limit',
  RateLimitRemaining: 'x-ratelimit-remaining',
  RateLimitReset: 'x-ratelimit-reset',
  RetryAfter: 'Retry-After',
  WWWAuthenticate: 'WWW-Authenticate',
  RequestId: 'x-request-id',
  AccessControlAllowOrigin: 'Access-Control-Allow-Origin',
}

function addHeaders(response: Response | undefined, names: Header[]): void {
  if (!response) return
  response.headers ??= {}
  for (const name of names)
    response.headers[HEADER_NAMES[name]] = { $ref: `#/components/headers/${name}` }
}

/**
 * Adds the API's headers to a generated OpenAPI 3.1 document, in place, from the facts each
 * route declares: its operation's parameters and response headers, and whether its body is
 * required.
 */
export function documentHeaders<
  D extends { paths?: Record<string, Record<string, Operation>>; components?: object },
>(document: D): D {
  document.components = { ...document.components, parameters: PARAMETERS, headers: HEADERS }
  for (const operations of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      const facts = operation[ROUTE_FACTS] ?? {}
      delete operation[ROUTE_FACTS]
      const responses = operation.responses ?? {}
      const parameters = operation.parameters ?? []
      const keyed = (operation.security?.length ?? 0) > 0
      const paged = parameters.some((p) => 'name' in p && p.name === 'cursor')
      const headers: Ref[] = []

      if (facts.scope) documentScope(operation, facts.scope)
      if (facts.bodyOptional && operation.requestBody) operation.requestBody.required = false
      if (facts.conditional) {
        if (method !== 'get') headers.push(param('IfMatch'))
        headers.push(param('IfNoneMatch'))
        for (const code of ['200', '201', '304']) addHeaders(responses[code], ['ETag'])
      }
      if (facts.idempotent) {
        headers.push(param('IdempotencyKey'))
        for (const code of ['200', '201']) addHeaders(responses[code], ['IdempotentReplayed'])
      }
      if (facts.located) addHeaders(responses['201'], ['Location'])
      addHeaders(responses['303'], ['Location'])
      if (paged) addHeaders(responses['200'], ['Link'])
      for (const [code, response] of Object.entries(responses)) {
        addHeaders(response, ['RequestId'])
        if (keyed && code !== '401')
          addHeaders(response, ['RateLimitLimit', 'RateLimitRemaining', 'RateLimitReset'])
        // note: with a 401 or 429 of its own, the operation's 4XX does not cover them
        if (keyed && (code === '4XX' || code === '401')) addHeaders(response, ['WWWAuthenticate'])
        if (keyed && (code === '4XX' || code === '429')) addHeaders(response, ['RetryAfter'])
        if (facts.anonymousLimit) {
          addHeaders(response, ['RateLimitLimit', 'RateLimitRemaining', 'RateLimitReset'])
          if (code === '4XX' || code === '429') addHeaders(response, ['RetryAfter'])
        }
        if (code === '5XX' || code === '503') addHeaders(response, ['RetryAfter'])
        if (facts.publicView || facts.anyOrigin) addHeaders(response, ['AccessControlAllowOrigin'])
      }
      if (headers.length > 0) operation.parameters = [...parameters, ...headers]
      // the key's format is checked by its own rule (400 invalidStatusKey), not the schema
      for (const p of parameters)
        if ('name' in p && p.in === 'path' && p.name === 'statusKey') {
          p.schema = { type: 'string', pattern: STATUS_KEY_PATTERN.source }
          p.description =
            '1 to 100 of `A-Z a-z 0-9 - . _ ~`, not `.` or `..`; otherwise 400 invalidStatusKey'
        }
    }
  }
  return document
}
