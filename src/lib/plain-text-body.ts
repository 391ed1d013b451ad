import { isUtf8 } from 'node:buffer'
import type { FastifyBodyParser, FastifyInstance, FastifyRequest } from 'fastify'
import { unsupportedMediaType, validationError } from './errors.ts'

/** The most a plain-text body may hold: a value is at most 10 characters. */
export const PLAIN_TEXT_BODY_LIMIT = 1024

/**
 * The media types a plain-text body may name (a body may also name none): its route's
 * `consumes`, so that the OpenAPI document lists them.
 */
export const PLAIN_TEXT_TYPES = ['text/plain', 'application/x-www-form-urlencoded']

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i
const UTF8 = /^utf-?8$/i

const notPlainText = () =>
  unsupportedMediaType(
    'Request body must be plain text in UTF-8 (Content-Type: text/plain, or none)',
  )

/**
 * The text of a plain-text body: UTF-8, a leading byte-order mark and one trailing line break
 * (`\n` or `\r\n`, as `echo` and text files end) left out; undefined when it is empty, which is
 * no body.
 */
function textOf(request: FastifyRequest, bytes: Buffer, field: string): string | undefined {
  const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]
  if (charset !== undefined && !UTF8.test(charset)) throw notPlainText()
  const coding = request.headers['content-encoding']
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity')
    throw unsupportedMediaType('Request body must not be compressed (Content-Encoding)')
  if (bytes.length === 0) return undefined
  // refused, never stored with its bad bytes replaced by U+FFFD
  if (!isUtf8(bytes))
    throw validationError([{ field, message: 'must be UTF-8 text' }], 'Request body is invalid')
  return bytes
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .replace(/\r?\n$/, '')
}

/**
 * Makes the routes of this (encapsulated) scope take a plain-text body instead of JSON
 * (docs/api.md#set-a-value-as-plain-text). Taken as text: `text/plain`, no `Content-Type`
 * at all (what `curl -T-` sends) and form encoding (what `curl -d` sends), read as it came,
 * never form-decoded: the one-liners devices and scripts use. Any other type is 415, JSON
 * included. The body is at most `PLAIN_TEXT_BODY_LIMIT` bytes; `field` is the field a
 * mistake in it names. Call before the scope's routes are registered.
 */
export function usePlainTextBodies(scope: FastifyInstance, field: string): void {
  const asText: FastifyBodyParser<Buffer> = (request, body, done) => {
    try {
      done(null, textOf(request, body, field))
    } catch (err) {
      done(err as Error, undefined)
    }
  }
  // note: `*` is also the parser of a body without Content-Type; the body is read (at most
  // the limit) before its type is judged, so a long body of another type is 413, not 415
  const unlessTyped: FastifyBodyParser<Buffer> = (request, body, done) => {
    if (request.headers['content-type'] === undefined) return asText(request, body, done)
    // an empty body is no body whatever its type, as for JSON (`curl -d ''` sends a form)
    if (body.length === 0) return done(null, undefined)
    done(notPlainText(), undefined)
  }
  const options = { parseAs: 'buffer', bodyLimit: PLAIN_TEXT_BODY_LIMIT } as const
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser(PLAIN_TEXT_TYPES, options, asText)
  scope.addContentTypeParser('*', options, unlessTyped)
}
