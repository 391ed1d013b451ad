// The eleven TypeBox schema builders statusd's schemas are written with, without TypeBox's
// runtime. `import { Type } from 'typebox'` loads 373 modules (about 60 ms of a 370 ms cold
// start, docs/performance.md "Cold start and memory") to build what are, for these eleven,
// plain JSON Schema objects. These functions build the same objects, TypeBox's hidden
// `~kind`, `~optional` and `~unsafe` markers included, and carry TypeBox's own signatures,
// so `Static<typeof Schema>` infers exactly as before; TypeBox is only a type package now.
// test/unit/type.test.ts holds every builder against TypeBox itself, shape for shape.
// note: a builder TypeBox has and this file lacks fails the type check where it is used;
// add it here (and to the test) rather than importing TypeBox's runtime again.
import type { Type as TypeBox } from 'typebox'

type Builders = Pick<
  typeof TypeBox,
  | 'Array'
  | 'Boolean'
  | 'Integer'
  | 'Literal'
  | 'Null'
  | 'Object'
  | 'Optional'
  | 'Record'
  | 'String'
  | 'Union'
  | 'Unsafe'
>

type Schema = Record<string, unknown>

/** Adds a property TypeBox keeps out of the JSON (not enumerable), as TypeBox does. */
function hide(schema: Schema, key: string, value: unknown): Schema {
  Object.defineProperty(schema, key, {
    value,
    writable: true,
    configurable: true,
    enumerable: false,
  })
  return schema
}

/** TypeBox's `Memory.Create`: the schema's own keywords, then the caller's options, and its kind. */
const create = (kind: string, keywords: Schema, options: object | undefined): Schema =>
  hide({ ...keywords, ...options }, '~kind', kind)

/** TypeBox's `Memory.Update` with one hidden marker: a copy of `schema`, every property as it was. */
function mark(schema: Schema, key: string, value: unknown): Schema {
  const copy: Schema = {}
  for (const name of Object.getOwnPropertyNames(schema)) {
    if (name === key) continue
    Object.defineProperty(
      copy,
      name,
      Object.getOwnPropertyDescriptor(schema, name) as PropertyDescriptor,
    )
  }
  return hide(copy, key, value)
}

const literalType = (value: unknown): string => {
  const type = typeof value
  if (type === 'string' || type === 'number' || type === 'boolean' || type === 'bigint') return type
  throw new Error('Invalid Literal value')
}

const builders = {
  String: (options?: object) => create('String', { type: 'string' }, options),
  Integer: (options?: object) => create('Integer', { type: 'integer' }, options),
  Boolean: (options?: object) => create('Boolean', { type: 'boolean' }, options),
  Null: (options?: object) => create('Null', { type: 'null' }, options),
  Literal: (value: unknown, options?: object) =>
    create('Literal', { type: literalType(value), const: value }, options),
  Array: (items: Schema, options?: object) => create('Array', { type: 'array', items }, options),
  Union: (anyOf: Schema[], options?: object) => create('Union', { anyOf }, options),
  Object: (properties: Record<string, Schema>, options?: object) => {
    const required = Object.keys(properties).filter(
      (key) => !('~optional' in (properties[key] as Schema)),
    )
    return create(
      'Object',
      { type: 'object', ...(required.length > 0 ? { required } : {}), properties },
      options,
    )
  },
  Optional: (schema: Schema) => mark(schema, '~optional', true),
  Unsafe: (schema: Schema) => mark(schema, '~unsafe', null),
  /** Keys are strings, all of them (`Type.String()`) or those matching its `pattern`. */
  Record: (key: Schema, value: Schema, options?: object) => {
    if (key['~kind'] !== 'String')
      throw new Error('Type.Record: statusd builds records with Type.String() keys only')
    const pattern = typeof key.pattern === 'string' ? key.pattern : '^.*$'
    return create('Record', { type: 'object', patternProperties: { [pattern]: value } }, options)
  },
}

export const Type = builders as unknown as Builders
