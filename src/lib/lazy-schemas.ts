import { createRequire } from 'node:module'
import type { Ajv, ValidateFunction } from 'ajv'
import type { FastifySchemaCompiler } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /** Compiles every route schema no request has compiled yet; returns how many it compiled. */
    compileSchemas(): number
  }
}

type Serialize = (data: unknown) => string
type BuildSerializer = (schema: object, options: object) => Serialize

// note: loaded on first use, like the schemas it compiles (cold start; see docs/performance.md)
const require = createRequire(import.meta.url)
let fastJsonStringify: BuildSerializer | undefined

/**
 * Route schemas compiled on first use instead of at start: Ajv validators and
 * fast-json-stringify serializers together cost more start-up time than everything else
 * statusd does before it is ready. A schema no request needs is never compiled (its validator
 * or serializer would be memory for nothing; a route's first request compiles its own).
 * `compileAll` (tests) compiles what is left, so a broken schema still fails the suite, not a
 * request.
 */
export class LazySchemas {
  readonly #pending = new Set<() => unknown>()
  readonly #ajv: { body: Ajv; query: Ajv }

  constructor(ajv: { body: Ajv; query: Ajv }) {
    this.#ajv = ajv
  }

  /** Fastify's `schemaController.compilersFactory`: no default compiler is loaded at all. */
  readonly compilersFactory = {
    buildValidator:
      (): FastifySchemaCompiler<unknown> =>
      ({ schema, httpPart }) =>
        this.#validator(() =>
          (httpPart === 'body' ? this.#ajv.body : this.#ajv.query).compile(schema as object),
        ),
    buildSerializer:
      (_external: unknown, options: object = {}) =>
      ({ schema }: { schema: unknown }): Serialize =>
        this.#serializer(() => {
          fastJsonStringify ??= require('fast-json-stringify') as BuildSerializer
          return fastJsonStringify(schema as object, options)
        }),
  }

  /** Compiles every schema not compiled yet; returns how many. */
  compileAll(): number {
    const pending = [...this.#pending]
    for (const compile of pending) compile()
    return pending.length
  }

  #lazy<F>(compile: () => F): () => F {
    let compiled: F | undefined
    const get = (): F => {
      if (compiled === undefined) {
        compiled = compile()
        this.#pending.delete(get)
      }
      return compiled
    }
    this.#pending.add(get)
    return get
  }

  #validator(compile: () => ValidateFunction): ValidateFunction {
    const get = this.#lazy(compile)
    const validate = ((data: unknown, context?: never) => get()(data, context)) as ValidateFunction
    // Fastify reads both off the function after calling it (Ajv's own shape)
    Object.defineProperties(validate, {
      errors: { get: () => get().errors },
      schemaEnv: { get: () => get().schemaEnv },
    })
    return validate
  }

  #serializer(compile: () => Serialize): Serialize {
    const get = this.#lazy(compile)
    return (data) => get()(data)
  }
}
