import { readFile } from 'node:fs/promises'
import { isDeepStrictEqual } from 'node:util'
import type { FastifyContextConfig, FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import Fastify from 'fastify'
import { PLAIN_TEXT_TYPES } from '../lib/plain-text-body.ts'
import { SESSION_COOKIE } from '../modules/users/sessions.service.ts'
import { API_KEY_HEADER } from './auth.ts'
import { documentHeaders, ROUTE_FACTS } from './openapi-headers.ts'
import type { RouteFacts } from './route-facts.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document (`yaml: true`: as YAML text), built on first use. */
    openApiDocument(options?: { yaml?: boolean }): Promise<unknown>
  }
}

const TAGS = [
  { name: 'statuses', description: 'Your statuses: set, update, read, list, delete' },
  { name: 'sharing', description: 'Roles on a status, subscriptions and history' },
  {
    name: 'notifications',
    description:
      'What you are told about statuses, and where: channels, rules per status, deliveries, browser push',
  },
  { name: 'live updates', description: 'Server-Sent Events of a status you may see' },
  { name: 'public', description: 'Anonymous views of public statuses: no API key' },
  { name: 'api keys', description: 'Your own API keys: list, create, rotate, revoke' },
  { name: 'users', description: 'Who an API key belongs to' },
  { name: 'accounts', description: 'Sign-up, sign-in and sign-out; your profile and sessions' },
  { name: 'passkeys', description: 'Your passkeys: register, list, rename, remove' },
  { name: 'sign-in', description: 'Signing in with a passkey' },
  { name: 'invitations', description: 'Invitations to a status: by link, or to a person' },
  { name: 'share links', description: 'Private links to a status, and what they show' },
  { name: 'boards', description: 'Your boards: named, ordered sets of statuses shown together' },
  {
    name: 'schedules',
    description: 'Values a status takes at set times: cron entries in a time zone',
  },
  { name: 'operations', description: 'Health probes and metrics' },
  { name: 'admin', description: 'Operators only: the instance, its users and its backups' },
]

/**
 * The OpenAPI document's top: the package's name, version and licence, where the API is, the
 * two ways to send a key and the session cookie.
 */
const swaggerOptions = ({ version, license }: PackageFacts) => ({
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'statusd',
      version,
      description:
        'Short status entries, set over HTTP+JSON and seen live. The reference, with every rule and example, is docs/api.md.',
      license: { name: license, identifier: license },
    },
    // note: relative, so the document is right wherever it is served from (behind a proxy,
    // under PUBLIC_URL or not): a client resolves it against the document's own URL
    servers: [{ url: '/', description: 'The statusd that serves this document' }],
    tags: TAGS,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey' as const, in: 'header', name: API_KEY_HEADER },
        bearer: { type: 'http' as const, scheme: 'bearer' },
        // a browser signed in (docs/accounts.md#sessions); its writes must come from the
        // service's own origin
        session: { type: 'apiKey' as const, in: 'cookie', name: SESSION_COOKIE },
      },
    },
  },
  // a schema registered by its `$id` (below) is a component under that name, not `def-N`
  refResolver: { buildLocalReference: (json: { $id?: string }) => String(json.$id) },
})

/** `security` of an operation, from who may call it (`config.auth`). */
const securityOf = (auth: RouteFacts['auth']): Record<string, string[]>[] =>
  auth === undefined || auth === 'none' ? [] : [{ apiKey: [] }, { bearer: [] }, { session: [] }]

/** The facts of a route the document shows (the rest of its config is not for clients). */
function factsOf(config: FastifyContextConfig | undefined): RouteFacts {
  const {
    auth,
    scope,
    idempotent,
    conditional,
    located,
    publicView,
    anyOrigin,
    bodyOptional,
    anonymousLimit,
  } = config ?? {}
  return {
    ...(auth !== undefined && { auth }),
    ...(scope !== undefined && { scope }),
    ...(idempotent && { idempotent }),
    ...(conditional && { conditional }),
    ...(located && { located }),
    ...(publicView && { publicView }),
    ...(anyOrigin && { anyOrigin }),
    ...(bodyOptional && { bodyOptional }),
    ...(anonymousLimit && { anonymousLimit }),
  }
}

type Json = unknown
interface TextSchema {
  $ref?: string
  pattern?: string
  minLength?: number
  maxLength?: number
}
interface RequestBody {
  description?: string
  content?: Record<string, { schema?: TextSchema }>
}
/** What of a generated document the passes below read and complete. */
type OpenApiDocument = Parameters<typeof documentHeaders>[0] & {
  paths?: Record<string, Record<string, { requestBody?: RequestBody }>>
  components?: { schemas?: Record<string, { description?: string; examples?: unknown[] }> }
}

/**
 * A request body given as a named schema says what it is, as an inline one does: its
 * description is the schema's (@fastify/swagger reads it only off an inline schema).
 */
function describeBodies(document: OpenApiDocument): OpenApiDocument {
  for (const operations of Object.values(document.paths ?? {}))
    for (const { requestBody: body } of Object.values(operations)) {
      const ref = Object.values(body?.content ?? {})[0]?.schema?.$ref
      const name = ref?.replace('#/components/schemas/', '')
      const description = name && document.components?.schemas?.[name]?.description
      if (body && description && body.description === undefined) body.description = description
    }
  return document
}

/**
 * A plain-text body as it is sent (lib/plain-text-body.ts): the schema validates the text the
 * server reads, after it left out one trailing line break (`\n` or `\r\n`); on the wire that
 * line break may be there. Lengths are the text's, the line break aside.
 */
function asSentText(schema: TextSchema): TextSchema {
  const { pattern, minLength = 0, maxLength } = schema
  if (pattern === undefined || !pattern.startsWith('^') || !pattern.endsWith('$')) return schema
  const lineBreak = '(?:\\r?\\n)?$'
  const lengths = `(?=[^]{${minLength},${maxLength ?? ''}}${lineBreak})`
  return {
    ...schema,
    ...(maxLength !== undefined && { maxLength: maxLength + 2 }),
    pattern: `^${lengths}${pattern.slice(1, -1)}${lineBreak}`,
  }
}

/** The schemas asSentText made (the document's passes run on each rendering of it). */
const sentTexts = new WeakSet<TextSchema>()

/** Every plain-text request body (lib/plain-text-body.ts) as it is sent: asSentText. */
function describeTextBodies(document: OpenApiDocument): OpenApiDocument {
  for (const operations of Object.values(document.paths ?? {}))
    for (const { requestBody: body } of Object.values(operations))
      for (const [type, media] of Object.entries(body?.content ?? {}))
        if (PLAIN_TEXT_TYPES.includes(type) && media.schema && !sentTexts.has(media.schema)) {
          media.schema = asSentText(media.schema)
          sentTexts.add(media.schema)
        }
  return document
}

/**
 * Names the schemas a document shows as components: every schema with an `$id` (`Status`,
 * `Error`, …) is replaced by a reference to it, and collected once under that name. Two
 * different schemas claiming one name fail the build: a client would get the wrong type.
 */
class Components {
  readonly schemas = new Map<string, { source: object; schema: Json }>()

  /** The schema with every named part of it (itself included) replaced by a reference. */
  refer(schema: Json): Json {
    if (Array.isArray(schema)) return schema.map((s) => this.refer(s))
    if (schema === null || typeof schema !== 'object') return schema
    const { $id } = schema as { $id?: unknown }
    if (typeof $id !== 'string') return this.#inner(schema)
    const known = this.schemas.get($id)
    if (known === undefined) this.schemas.set($id, { source: schema, schema: this.#inner(schema) })
    else if (known.source !== schema && !isDeepStrictEqual(known.source, schema))
      throw new Error(`two different schemas are named ${$id}`)
    return { $ref: `${$id}#` }
  }

  #inner(schema: object): Json {
    return Object.fromEntries(
      Object.entries(schema)
        // note: Ajv's discriminator (a body checked against one branch of a oneOf by a
        // property) is for validation; OpenAPI's would need named branches, and the oneOf
        // of branches with their own `const` says the same
        .filter(([k]) => k !== 'discriminator')
        .map(([k, v]) => [k, this.refer(v)]),
    )
  }
}

/**
 * The schema the document is generated from: named schemas as references, and the route's
 * facts from its config (`security`, and the rest for documentHeaders to read).
 */
function documentedSchema(
  schema: FastifySchema | undefined,
  config: FastifyContextConfig | undefined,
  components: Components,
): FastifySchema | undefined {
  if ((schema as { hide?: boolean } | undefined)?.hide) return schema
  const facts = factsOf(config)
  const { body, response, ...rest } = schema ?? {}
  return {
    ...rest,
    ...(body !== undefined && { body: components.refer(body) }),
    ...(response !== undefined && { response: components.refer(response) }),
    security: securityOf(facts.auth),
    [ROUTE_FACTS]: facts,
  } as FastifySchema
}

/**
 * The named schemas' examples, recorded from a real run by scripts/api-examples.ts (the run
 * docs/api.md's examples come from): in place of any written by hand.
 */
async function recordedExamples(): Promise<Record<string, unknown>> {
  const text = await readFile(new URL('./openapi-examples.json', import.meta.url), 'utf8')
  return JSON.parse(text) as Record<string, unknown>
}

function withExamples(
  document: OpenApiDocument,
  examples: Record<string, unknown>,
): OpenApiDocument {
  for (const [name, example] of Object.entries(examples)) {
    const schema = document.components?.schemas?.[name]
    if (schema) schema.examples = [example]
  }
  return document
}

/** What the document's `info` says of the package: its version and SPDX licence. */
interface PackageFacts {
  version: string
  license: string
}

async function packageFacts(): Promise<PackageFacts> {
  const text = await readFile(new URL('../../package.json', import.meta.url), 'utf8')
  const { version, license } = JSON.parse(text) as PackageFacts
  return { version, license }
}

/**
 * GET /openapi.json: OpenAPI 3.1 generated by @fastify/swagger from the schemas that validate
 * requests and the facts each route declares in its config (route-facts.ts). The routes are
 * recorded as they are registered; the document is generated on first request, by
 * @fastify/swagger in an inner instance holding the same routes (with no handlers and nothing
 * compiled), so loading and running it costs no cold start. Call before any route is
 * registered.
 */
export function openApiRoutes(app: FastifyInstance): void {
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => {
    // note: like @fastify/swagger, which leaves out the HEAD routes Fastify adds
    if (route.method !== 'HEAD') routes.push(route)
  })

  type Render = (options?: { yaml?: boolean }) => unknown
  let document: Promise<Render> | undefined
  async function build(): Promise<Render> {
    const [{ default: swagger }, facts, examples] = await Promise.all([
      import('@fastify/swagger'),
      packageFacts(),
      recordedExamples(),
    ])
    const inner = Fastify({ routerOptions: { ignoreTrailingSlash: true, maxParamLength: 16_384 } })
    // the document reads the schemas; nothing here validates or serializes with them
    inner.setValidatorCompiler(() => () => true)
    inner.setSerializerCompiler(() => JSON.stringify)
    await inner.register(swagger, {
      ...swaggerOptions(facts),
      transformObject: (generated) =>
        withExamples(
          describeTextBodies(
            describeBodies(
              documentHeaders(
                ('openapiObject' in generated ? generated.openapiObject : {}) as OpenApiDocument,
              ),
            ),
          ),
          examples,
        ),
    })
    const components = new Components()
    // note: read when the document is built, after every onRoute hook (the API's scope fills
    // in `auth`) has run
    const documented = routes.map(({ method, url, schema, config }) => ({
      method,
      url,
      config,
      schema: documentedSchema(schema, config, components),
      handler: async () => null,
    }))
    for (const [$id, { schema }] of components.schemas)
      inner.addSchema({ ...(schema as object), $id })
    for (const route of documented) inner.route(route as RouteOptions)
    await inner.ready()
    return (options) => (options?.yaml ? inner.swagger({ yaml: true }) : inner.swagger())
  }

  app.decorate('openApiDocument', async (options?: { yaml?: boolean }) => {
    document ??= build().catch((err: unknown) => {
      document = undefined
      throw err
    })
    return (await document)(options)
  })
  app.get('/openapi.json', { schema: { hide: true } }, () => app.openApiDocument())
}
