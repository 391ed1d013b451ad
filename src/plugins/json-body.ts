import { isUtf8 } from 'node:buffer'
import type { FastifyInstance, preValidationHookHandler } from 'fastify'
import { invalidJson, unsupportedMediaType } from '../lib/errors.ts'

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i
const UTF8 = /^utf-?8$/i

/**
 * Replaces Fastify's JSON body parser with one that refuses what it would store wrongly.
 * JSON is UTF-8 (RFC 8259 §8.1): a body that is not valid UTF-8 is 400 invalidJson, where
 * Fastify's decoder would turn each bad byte into U+FFFD and store that. A `charset` other
 * than UTF-8 is 415, where the body would be read as UTF-8 anyway, and so is a body with a
 * Content-Encoding (gzip) statusd does not decode. An empty body is no body, whatever its
 * media type (Fastify's parser refuses it, even where a route takes none). Everything else
 * (`__proto__` keys, syntax errors) is Fastify's own parser, unchanged.
 */
export function useStrictJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]
    if (charset !== undefined && !UTF8.test(charset))
      return done(unsupportedMediaType('Request body must be JSON in UTF-8 (charset=utf-8)'))
    // a compressed body would be read as JSON text and fail as invalidJson: say why instead
    // (RFC 9110 §8.4: a content coding the server does not support is 415)
    const coding = request.headers['content-encoding']
    if (coding !== undefined && coding.trim().toLowerCase() !== 'identity')
      return done(unsupportedMediaType('Request body must not be compressed (Content-Encoding)'))
    const bytes = body as Buffer
    // an empty body is no body, as without a Content-Type: a route that takes none is fine,
    // and one that needs one answers as it does to a missing body (emptyBody)
    if (bytes.length === 0) return done(null, undefined)
    if (!isUtf8(bytes)) return done(invalidJson('Request body is not valid UTF-8'))
    parse(request, bytes.toString('utf8'), done)
  })
  // any other media type: an empty body is no body here too (`curl -X DELETE -d ''` sends
  // it as a form), and anything in it is not JSON: 415, without reading it
  app.addContentTypeParser('*', (request, _payload, done) => {
    const length = request.headers['content-length']
    const empty =
      length === undefined
        ? request.headers['transfer-encoding'] === undefined
        : Number(length) === 0
    if (empty) done(null, undefined)
    else done(unsupportedMediaType())
  })
}

const noBodyIsEmpty: preValidationHookHandler = (request, _reply, done) => {
  request.body ??= {}
  done()
}

/**
 * Routes that declare `bodyOptional` (every property of their body is optional) take no body
 * at all as `{}`. Call before any route is registered.
 */
export function optionalBodies(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.bodyOptional)
      route.preValidation = [...[route.preValidation ?? []].flat(), noBodyIsEmpty]
  })
}
