import { AssertionError } from 'node:assert'
import { after } from 'node:test'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'

// The API's contract, checked on every response a test receives (docs/architecture.md#tests):
// each answer of a statusd the tests talk to — through `TestApp.request`, through `fetch` to
// an app listening on a socket, or in a journey's browser — is held to the OpenAPI document
// that statusd serves at GET /openapi.json. The status must be declared for the operation;
// the Content-Type must be one it declares (and no body where it declares none); a body must
// match its schema (Ajv, JSON Schema 2020-12: the dialect of OpenAPI 3.1); a declared header
// must match its schema, and a header the document names (ETag, Location, Retry-After, the
// rate-limit headers, …) must be declared where it is sent. A mismatch fails the test at the
// request. Requests to what the document does not describe (pages, assets, unknown paths)
// are not checked. Validators are compiled once per process per document, each when first
// needed.

/** A response as the tests see it. Header names in lower case. */
export interface SeenResponse {
  method: string
  /** The path (and query), or an absolute URL. */
  url: string
  status: number
  headers: Record<string, string | string[] | number | undefined>
  /** The body as text ('' when none). */
  body: string
}

type Json = Record<string, unknown>
interface Media {
  schema?: Json
}
interface Header {
  schema?: Json
}
interface Response {
  content?: Record<string, Media>
  headers?: Record<string, Header | { $ref: string }>
}
interface Operation {
  responses?: Record<string, Response | { $ref: string }>
}
interface Document {
  paths: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, Json>; headers?: Record<string, Header> }
}

/** Where Ajv finds the document's named schemas (`#/components/schemas/<name>`). */
const SCHEMAS = 'https://statusd.invalid/components/schemas/'

let checked = 0
const contracts = new Map<string, Contract>()

// the count of this file's responses, for scripts/test.ts to add up (contract-reporter.ts);
// note: only in a test file, since a hook makes any other script that loads this module (a
// screenshot script, a child process a test starts) print a test summary; a child inherits
// the runner's environment, so it is told by its script, as browser.ts tells it
if (process.argv[1]?.endsWith('.test.ts'))
  after((t) => {
    if (checked > 0)
      (t as { diagnostic?(message: string): void }).diagnostic?.(
        `contract: ${checked} responses checked against the OpenAPI document`,
      )
  })

/** The contract of a document (its text, as served): one per process per document. */
export function contractOf(documentText: string): Contract {
  let contract = contracts.get(documentText)
  if (!contract) {
    contract = new Contract(JSON.parse(documentText) as Document)
    contracts.set(documentText, contract)
  }
  return contract
}

/** What is wrong with `response`, in a message naming each mismatch; undefined if nothing. */
export function breach(contract: Contract, response: SeenResponse): string | undefined {
  const problems = contract.problems(response)
  if (problems === undefined) return undefined
  checked += 1
  if (problems.length === 0) return undefined
  return `${response.method} ${response.url} → ${response.status} breaks the OpenAPI document:\n- ${problems.join('\n- ')}\nbody: ${response.body.slice(0, 500)}`
}

/** Fails (an AssertionError naming each mismatch) when `response` breaks the contract. */
export function assertContract(contract: Contract, response: SeenResponse): void {
  const message = breach(contract, response)
  if (message !== undefined) throw new AssertionError({ message })
}

/** What of a browser's response (playwright-core's Response) the check reads. */
interface BrowserResponse {
  url(): string
  status(): number
  request(): { method(): string }
  allHeaders(): Promise<Record<string, string>>
  body(): Promise<Buffer>
}

/**
 * What is wrong with a response a journey's browser received from the statusd at `origin`
 * (a journey reports it as it reports a console error); undefined if nothing, or if the
 * body went with its page before it could be read.
 */
export async function browserBreach(
  contract: Promise<Contract>,
  origin: string,
  response: BrowserResponse,
): Promise<string | undefined> {
  const url = new URL(response.url())
  if (url.origin !== origin) return undefined
  const method = response.request().method()
  const status = response.status()
  let headers: Record<string, string>
  let body = ''
  try {
    headers = await response.allHeaders()
    const stream = essence(headers['content-type']) === 'text/event-stream'
    // note: a redirect's body is not kept by the browser
    if (!stream && method !== 'HEAD' && (status < 300 || status >= 400))
      body = (await response.body()).toString('utf8')
  } catch {
    return undefined
  }
  return breach(await contract, {
    method,
    url: `${url.pathname}${url.search}`,
    status,
    headers,
    body,
  })
}

let first: Promise<Contract> | undefined

/**
 * The contract of the document the process's first app serves (the routes and their schemas
 * are the same in every app a test makes).
 */
export function servedContract(app: FastifyInstance): Promise<Contract> {
  first ??= app.inject({ url: '/openapi.json' }).then(
    (r) => contractOf(r.body),
    (err: unknown) => {
      first = undefined
      throw err
    },
  )
  return first
}

/** An injected request's response, checked: TestApp.request. */
export async function checkedInject(
  app: FastifyInstance,
  method: string,
  url: string,
  response: LightMyRequestResponse,
): Promise<LightMyRequestResponse> {
  assertContract(await servedContract(app), {
    method,
    url,
    status: response.statusCode,
    headers: response.headers,
    body: response.body,
  })
  return response
}

/** The contracts of the servers listening on this machine's ports that `fetch` checks. */
const watched = new Map<string, () => Promise<Contract>>()
const realFetch = globalThis.fetch

/**
 * From now on `fetch` checks what the statusd at `origin` answers, against `contract`, until
 * `unwatch` is called.
 */
export function watchFetches(origin: string, contract: () => Promise<Contract>): () => void {
  const port = new URL(origin).port
  watched.set(port, contract)
  return () => {
    if (watched.get(port) === contract) watched.delete(port)
  }
}

/** The contract of the statusd at `baseUrl` (another process): its GET /openapi.json. */
export async function remoteContract(baseUrl: string): Promise<Contract> {
  return contractOf(await (await realFetch(`${baseUrl}/openapi.json`)).text())
}

const LOCAL = new Set(['127.0.0.1', 'localhost', '[::1]'])

// note: wraps the global fetch once per process; a request to anything not watched (a
// webhook receiver, a push service) passes untouched
globalThis.fetch = async function checkedFetch(input, init) {
  const response = await realFetch(input, init)
  const url = new URL(response.url || (input instanceof Request ? input.url : String(input)))
  const contract = LOCAL.has(url.hostname) ? watched.get(url.port) : undefined
  if (!contract) return response
  // after a redirect, the response is the GET of its Location
  const method = response.redirected
    ? 'GET'
    : (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase()
  const stream = essence(response.headers.get('content-type') ?? '') === 'text/event-stream'
  const body = stream || method === 'HEAD' ? '' : await response.clone().text()
  assertContract(await contract(), {
    method,
    url: `${url.pathname}${url.search}`,
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body,
  })
  return response
}

const essence = (type: string | undefined) => type?.split(';')[0]?.trim().toLowerCase() ?? ''
const isJson = (type: string) => type === 'application/json' || type.endsWith('+json')
const headerText = (value: SeenResponse['headers'][string]) =>
  Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value)

export class Contract {
  readonly #ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false })
  readonly #document: Document
  readonly #routes: { method: string; path: string; pattern: RegExp; operation: Operation }[]
  /** Every header the document names on some response: sent elsewhere, it must be declared. */
  readonly #named = new Set<string>()
  readonly #validators = new Map<string, ValidateFunction>()

  constructor(document: Document) {
    this.#document = document
    addFormats.default(this.#ajv)
    // OpenAPI 3.1's own keywords in a schema object
    this.#ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs'])
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {}))
      this.#ajv.addSchema(rebased(schema), `${SCHEMAS}${name}`)
    this.#routes = Object.entries(document.paths)
      .flatMap(([path, operations]) =>
        Object.entries(operations).map(([method, operation]) => ({
          method: method.toUpperCase(),
          path,
          pattern: new RegExp(
            `^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`,
          ),
          operation,
        })),
      )
      // a path without a parameter where one with would match too (…/revoke-all, …/{keyId})
      .sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0))
    for (const { operation } of this.#routes)
      for (const response of Object.values(operation.responses ?? {}))
        for (const name of Object.keys(this.#resolve(response).headers ?? {}))
          this.#named.add(name.toLowerCase())
  }

  /** What in `response` the document does not allow; undefined if it does not describe it. */
  problems(response: SeenResponse): string[] | undefined {
    const { pathname } = new URL(response.url, 'http://x')
    // note: a HEAD is its GET without the body (Fastify answers it from the GET route)
    const head = response.method === 'HEAD'
    const method = head ? 'GET' : response.method
    const route = this.#routes.find((r) => r.method === method && r.pattern.test(pathname))
    if (!route) return undefined
    const where = `${method.toLowerCase()} ${route.path}`
    const responses = route.operation.responses ?? {}
    const code = String(response.status)
    const key = [code, `${code[0]}XX`, 'default'].find((k) => k in responses)
    if (key === undefined)
      return [`status ${code} is not declared (declared: ${Object.keys(responses).join(', ')})`]
    const declared = this.#resolve(responses[key] as Response)
    const problems: string[] = []

    const type = essence(headerText(response.headers['content-type']))
    const content = declared.content ?? {}
    const media = content[type] ?? content[`${type.split('/')[0]}/*`] ?? content['*/*']
    if (Object.keys(content).length === 0) {
      if (!head && response.body.length > 0)
        problems.push(`a body (${type || 'no Content-Type'}) where ${code} declares none`)
    } else if (!media) {
      problems.push(
        `Content-Type ${type || '(none)'} is not declared (declared: ${Object.keys(content).join(', ')})`,
      )
    } else if (!head && media.schema && type !== 'text/event-stream') {
      let body: unknown = response.body
      let parsed = true
      if (isJson(type))
        try {
          body = JSON.parse(response.body)
        } catch {
          parsed = false
          problems.push('the body is not JSON')
        }
      const validate = this.#validator(`${where} ${key} ${type}`, media.schema)
      if (parsed && !validate(body))
        for (const e of validate.errors ?? [])
          problems.push(`body${e.instancePath} ${e.message} (${e.schemaPath})`)
    }

    const headers = declared.headers ?? {}
    const declaredNames = new Set(Object.keys(headers).map((n) => n.toLowerCase()))
    for (const [name, header] of Object.entries(headers)) {
      const value = headerText(response.headers[name.toLowerCase()])
      const schema = this.#resolve(header).schema
      if (value === undefined || !schema) continue
      const typed = schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value
      const validate = this.#validator(`${where} ${key} header ${name}`, schema)
      if (!validate(typed))
        problems.push(`header ${name}: ${JSON.stringify(value)} ${validate.errors?.[0]?.message}`)
    }
    for (const name of Object.keys(response.headers))
      if (this.#named.has(name) && !declaredNames.has(name))
        problems.push(`header ${name} is sent, but not declared for ${code}`)
    return problems
  }

  /** The object a `$ref` to the document's components names (itself when not a reference). */
  #resolve<T extends object>(value: T | { $ref: string }): T {
    if (!('$ref' in value) || typeof value.$ref !== 'string') return value as T
    let found: unknown = this.#document
    for (const part of value.$ref.replace(/^#\//, '').split('/'))
      found = (found as Record<string, unknown>)[part]
    return found as T
  }

  #validator(key: string, schema: Json): ValidateFunction {
    let validate = this.#validators.get(key)
    if (!validate) {
      validate = this.#ajv.compile(rebased(schema))
      this.#validators.set(key, validate)
    }
    return validate
  }
}

/** A schema whose references to named schemas point where Ajv holds them (SCHEMAS). */
function rebased(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema), (k, v) =>
    k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')
      ? `${SCHEMAS}${v.slice('#/components/schemas/'.length)}`
      : v,
  )
}
