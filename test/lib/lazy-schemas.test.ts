import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Ajv } from 'ajv'
import { LazySchemas } from '../../src/lib/lazy-schemas.ts'

const schema = {
  type: 'object',
  properties: { value: { type: 'string', maxLength: 3 } },
  required: ['value'],
  additionalProperties: false,
}

function make() {
  let compiles = 0
  const ajv = new Ajv({ allErrors: true })
  const counting = new Proxy(ajv, {
    get: (target, name) =>
      name === 'compile'
        ? (s: object) => {
            compiles += 1
            return target.compile(s)
          }
        : Reflect.get(target, name),
  })
  const schemas = new LazySchemas({ body: counting, query: counting })
  const route = { schema, method: 'PATCH', url: '/x', httpPart: 'body' }
  const validate = schemas.validatorCompiler(route) as ((data: unknown) => boolean) & {
    errors?: unknown[]
  }
  const serialize = schemas.serializerCompiler({ ...route, httpStatus: '200' })
  return { schemas, validate, serialize, compiles: () => compiles }
}

describe('route schemas compile on first use (cold start, docs/performance.md)', () => {
  it('nothing compiles until a request needs it; then once', () => {
    const { validate, compiles } = make()
    assert.equal(compiles(), 0)
    assert.equal(validate({ value: 'ok' }), true)
    assert.equal(validate({ value: 'long' }), false)
    assert.equal(compiles(), 1)
  })

  it('a failed validation exposes Ajv errors, as Fastify reads them', () => {
    const { validate } = make()
    assert.equal(validate({ value: 'toolong', extra: 1 }), false)
    assert.equal(validate.errors?.length, 2)
  })

  it('serializers write what their schema allows', () => {
    const { serialize } = make()
    assert.equal(serialize({ value: 'ok', secret: 'x' }), '{"value":"ok"}')
  })

  it('compileAll compiles what is left and counts it', () => {
    const { schemas, validate } = make()
    assert.equal(schemas.compileAll(), 2)
    assert.equal(schemas.compileAll(), 0)
    assert.equal(validate({ value: 'ok' }), true)
  })
})
