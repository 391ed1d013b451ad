import { Type } from 'typebox'

/** A string enum rendered as `{ type: 'string', enum }`: clean validation errors and OpenAPI. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: object = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

/** RFC 3339 timestamp. */
export const Timestamp = (options: object = {}) => Type.String({ format: 'date-time', ...options })

/**
 * A route-schema key: the request body may be left out (every property is optional).
 * note: @fastify/swagger marks every body it documents as required; the OpenAPI plugin
 * reads this key (an `x-` key, copied to the operation) to say otherwise.
 */
export const BODY_OPTIONAL = 'x-body-optional'
