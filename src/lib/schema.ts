import { Type } from 'typebox'

/** A string enum rendered as `{ type: 'string', enum }`: clean validation errors and OpenAPI. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: object = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

/** RFC 3339 timestamp. */
export const Timestamp = (options: object = {}) => Type.String({ format: 'date-time', ...options })

/**
 * Schema keys for what a validation failure answers, kept beside the schema they explain.
 * Symbols, so neither Ajv nor the OpenAPI document sees them (JSON has no symbol keys).
 */
export const PATTERN_MESSAGE: unique symbol = Symbol('patternMessage')
export const READ_ONLY_PROPERTIES: unique symbol = Symbol('readOnlyProperties')
export const BODY_FIELD: unique symbol = Symbol('bodyField')

/** A string schema whose `pattern` failure answers `message` instead of the raw regex. */
export const withPatternMessage = <T extends object>(schema: T, message: string): T =>
  Object.assign(schema, { [PATTERN_MESSAGE]: message })

/**
 * An object schema (a request body) that answers "is read-only", rather than "is not a known
 * property", to the properties named: ones a client reads in a response but may not send.
 */
export const withReadOnlyProperties = <T extends object>(schema: T, names: Iterable<string>): T =>
  Object.assign(schema, { [READ_ONLY_PROPERTIES]: new Set(names) })

/**
 * A whole-body schema that stands for one field (a plain-text body is the value): its
 * failures name that field, as the same mistake in a JSON body would.
 */
export const asBodyField = <T extends object>(schema: T, field: string): T =>
  Object.assign(schema, { [BODY_FIELD]: field })

/**
 * A response without a body (303 See Other, 304 Not Modified): the OpenAPI document shows it
 * with no `content` (@fastify/swagger leaves content out for `type: 'null'`).
 */
export const NoBody = (description: string): { description: string; type: string } => ({
  description,
  type: 'null',
})

/** The 304 of a conditional read (docs/api.md#conditional-requests-etag-if-match). */
export const NOT_MODIFIED = NoBody('Not modified: `If-None-Match` names the current ETag (no body)')
