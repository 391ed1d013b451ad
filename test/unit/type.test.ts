import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Type as TypeBox } from 'typebox'
import { Type } from '../../src/lib/type.ts'

/** Every own property, enumerable or hidden (TypeBox's `~kind` markers), as a plain value. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const key of Object.getOwnPropertyNames(value).sort()) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor
    out[descriptor.enumerable ? key : `(hidden) ${key}`] = shape(descriptor.value)
  }
  return out
}

/** Builds the same schema with statusd's builders and with TypeBox's own. */
const cases: [string, (T: typeof Type) => unknown][] = [
  ['String', (T) => T.String()],
  ['String with options', (T) => T.String({ minLength: 1, maxLength: 10, description: 'd' })],
  ['Integer', (T) => T.Integer({ minimum: 1 })],
  ['Boolean', (T) => T.Boolean()],
  ['Null', (T) => T.Null({ description: 'none' })],
  ['Literal string', (T) => T.Literal('ok')],
  ['Literal number and boolean', (T) => [T.Literal(3), T.Literal(true, { description: 'x' })]],
  ['Array', (T) => T.Array(T.String(), { maxItems: 5 })],
  ['Union', (T) => T.Union([T.String(), T.Null()], { description: 'or none' })],
  ['Optional', (T) => T.Optional(T.String({ format: 'date-time' }))],
  ['Optional of a Union', (T) => T.Optional(T.Union([T.Integer(), T.Null()]))],
  ['Unsafe', (T) => T.Unsafe<'a' | 'b'>({ type: 'string', enum: ['a', 'b'] })],
  [
    'Object with required and optional properties',
    (T) =>
      T.Object(
        {
          id: T.String(),
          note: T.Optional(T.String()),
          items: T.Array(T.Object({ n: T.Integer() })),
        },
        { additionalProperties: false, description: 'a thing' },
      ),
  ],
  ['Object with only optional properties', (T) => T.Object({ a: T.Optional(T.Boolean()) })],
  ['Object with no properties', (T) => T.Object({})],
  ['Record with any string key', (T) => T.Record(T.String(), T.Integer())],
  [
    'Record with a key pattern',
    (T) =>
      T.Record(T.String({ pattern: '^[a-z]+$' }), T.Object({ x: T.Null() }), {
        additionalProperties: false,
      }),
  ],
]

describe('schema builders without TypeBox at run time (src/lib/type.ts, cold start)', () => {
  for (const [name, build] of cases)
    it(`${name}: the same object TypeBox builds, hidden markers included`, () => {
      assert.deepEqual(shape(build(Type)), shape(build(TypeBox as unknown as typeof Type)))
    })

  it('a Literal of another type is refused, as TypeBox refuses it', () => {
    const bad = { not: 'a literal' } as unknown as string
    assert.throws(() => TypeBox.Literal(bad))
    assert.throws(() => Type.Literal(bad), /Invalid Literal value/)
  })

  it('a Record keyed by anything but Type.String() is refused, not built wrong', () => {
    assert.throws(() => Type.Record(Type.Integer(), Type.Boolean()), /Type\.String\(\) keys only/)
  })

  const child = (...args: string[]) =>
    JSON.parse(
      execFileSync(
        process.execPath,
        [fileURLToPath(new URL('../helpers/openapi-child.ts', import.meta.url)), ...args],
        { env: { ...process.env, TEST_ENGINE: 'sqlite' }, maxBuffer: 64 * 1024 * 1024 },
      ).toString(),
    ) as { doc: unknown; typeboxModules: string[] }
  // the app as it runs, built once for both tests below
  let ours: ReturnType<typeof child> | undefined
  const asItRuns = () => {
    ours ??= child()
    return ours
  }

  it('every route schema (the OpenAPI document) is what TypeBox itself builds', () => {
    const typebox = child('--typebox')
    assert.ok(typebox.typeboxModules.length > 0, 'the swapped run really used TypeBox')
    assert.deepEqual(asItRuns().doc, typebox.doc)
  })

  it('building the app and serving its OpenAPI document loads no TypeBox module', () => {
    assert.deepEqual(asItRuns().typeboxModules, [])
  })
})
