import { Type } from 'typebox'

/** A string enum rendered as `{ type: 'string', enum }`: clean validation errors and OpenAPI. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: object = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

/** RFC 3339 timestamp. */
export const Timestamp = (options: object = {}) => Type.String({ format: 'date-time', ...options })
