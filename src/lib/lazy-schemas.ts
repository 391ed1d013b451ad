import { createRequire } from 'node:module'
import type { Ajv, ValidateFunction } from 'ajv'
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /** Compiles every route schema no request has compiled yet; returns how many it compiled. */
    compileSchemas(): number
  }
}

type Serialize = (data: unknown) => string
type BuildSerializer = (schema: object) => Serialize

// note: loaded on first use, like the schemas it compiles (docs/performance.md#cold-start-and-memory)
const require = createRequire(import.meta.url)
let fastJsonStringify: BuildSerializer | undefined

/**
 * Route schemas compiled on first use instead of at start, through Fastify's own
 * `setValidatorCompiler` and `setSerializerCompiler`: compiling every Ajv validator and
 * fast-json-stringify serializer up front costs more start-up time than everything else
 * statusd does before it is ready, and a schema no request needs is never compiled (its
 * validator or serializer would be memory for nothing). `compileAll` (tests) compiles what is
 * left, so a broken schema still fails the suite, not a request.
 */
export class LazySchemas {
  readonly #pending = new Set<() => unknown>()
  readonly #ajv: { body: Ajv; query: Ajv }

  constructor(ajv: { body: Ajv; query: Ajv }) {
    this.#ajv = ajv
  }

  /** For `setValidatorCompiler`: bodies by one Ajv, the other parts (query, params) by the other. */
  readonly validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
    this.#validator(() =>
      (httpPart === 'body' ? this.#ajv.body : this.#ajv.query).compile(schema as object),
    )

  /** For `setSerializerCompiler`. */
  readonly serializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) =>
    this.#serializer(() => {
      fastJsonStringify ??= require('fast-json-stringify') as BuildSerializer
      return fastJsonStringify(schema as object)
    })

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
