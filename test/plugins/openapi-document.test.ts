import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { before, describe, it } from 'node:test'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { ERROR_CODES } from '../../src/lib/errors.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'

// What GET /openapi.json promises a client generator (docs/api.md, its opening): every
// operation named, the recurring schemas as named components, the error codes as an enum,
// examples that are valid, the package's version, and the headers each route declares in its
// config (src/plugins/route-facts.ts) documented on that route and no other.

let t: TestApp
// biome-ignore lint/suspicious/noExplicitAny: the parsed OpenAPI document, read by the assertions
let doc: any
let yaml: string
const suite = suiteLifetime()
before(async () => {
  t = await makeApp(suite)
  doc = (await t.app.inject({ url: '/openapi.json' })).json()
  yaml = String(await t.app.openApiDocument({ yaml: true }))
})

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

interface Operation {
  operationId?: string
  security?: Record<string, string[]>[]
  parameters?: { $ref?: string; name?: string; in?: string }[]
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> }
  responses: Record<string, { headers?: Record<string, unknown>; content?: object }>
}

/** Every operation of the document, with its method and path. */
const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method, path, op, name: `${method.toUpperCase()} ${path}` })),
  )

const operation = (method: string, path: string): Operation => doc.paths[path][method]

/** The names of the header parameters of an operation, its `$ref`s resolved. */
const headerParameters = (op: Operation) =>
  (op.parameters ?? [])
    .map((p) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop() as string] : p))
    .filter((p) => p.in === 'header')
    .map((p) => p.name as string)

/** Every `$ref` anywhere in a value. */
function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsIn(v, found)
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value))
      if (k === '$ref' && typeof v === 'string') found.push(v)
      else refsIn(v, found)
  return found
}

describe('the OpenAPI document names what a client generator needs', () => {
  it('every operation has an operationId: camelCase, and unique in the document', () => {
    const seen = new Map<string, string>()
    for (const { name, op } of operations()) {
      assert.ok(op.operationId, `${name} has an operationId`)
      assert.match(op.operationId, /^[a-z][A-Za-z0-9]*$/, `${name}: ${op.operationId}`)
      assert.ok(
        !seen.has(op.operationId),
        `${op.operationId}: ${name} and ${seen.get(op.operationId)}`,
      )
      seen.set(op.operationId, name)
    }
    // the names the reference uses for its main operations (docs/api.md#endpoints)
    assert.equal(operation('post', '/v1/status-keys/{statusKey}').operationId, 'setStatusByKey')
    assert.equal(operation('patch', '/v1/status/{statusId}').operationId, 'updateStatus')
    assert.equal(operation('get', '/v1/user/status').operationId, 'listMyStatuses')
  })

  it("info.version is the package's version", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    assert.equal(doc.info.version, pkg.version)
  })

  it('nothing in it cites SPEC, and no internal marker leaks (JSON and YAML)', () => {
    for (const text of [JSON.stringify(doc), yaml]) {
      assert.doesNotMatch(text, /SPEC/)
      assert.doesNotMatch(text, /x-route-facts|x-body-optional/)
    }
  })

  it('the error body is the Error component, its errorCode an enum of every ErrorCode', () => {
    const error = doc.components.schemas.Error
    assert.deepEqual(error.properties.errorCode.enum, [...ERROR_CODES])
    assert.deepEqual(error.required, ['message', 'errorCode', 'requestId'])
    for (const { name, op } of operations())
      for (const [code, response] of Object.entries(op.responses))
        if (/^[45]/.test(code) && response.content && 'application/json' in response.content)
          assert.deepEqual(
            refsIn(response.content),
            ['#/components/schemas/Error'],
            `${name} ${code} is an Error`,
          )
  })

  it('the recurring schemas are named components, and every reference resolves', () => {
    const schemas = doc.components.schemas as Record<string, object>
    for (const name of ['Status', 'StatusInput', 'StatusListEntry', 'Error'])
      assert.ok(schemas[name], `components.schemas.${name}`)
    assert.ok(!Object.keys(schemas).some((n) => n.startsWith('def-')), 'no anonymous def-N')
    const status = '#/components/schemas/Status'
    assert.deepEqual(refsIn(operation('get', '/v1/status/{statusId}').responses['200']?.content), [
      status,
    ])
    assert.deepEqual(refsIn(operation('patch', '/v1/status/{statusId}').requestBody), [
      '#/components/schemas/StatusInput',
    ])
    assert.deepEqual(refsIn(operation('get', '/v1/user/status').responses['200']?.content), [
      '#/components/schemas/StatusListEntry',
    ])
    for (const ref of refsIn(doc)) {
      const [, section, name] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? []
      assert.ok(section && name && doc.components[section]?.[name], `${ref} resolves`)
    }
  })

  it('the main schemas carry examples, and each example is valid against its schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true })
    addFormats.default(ajv)
    ajv.addSchema({ $id: 'openapi.json', components: doc.components })
    for (const name of ['Status', 'StatusInput', 'StatusListEntry', 'Error'])
      assert.ok(doc.components.schemas[name].examples?.length > 0, `${name} has examples`)
    for (const [name, schema] of Object.entries(
      doc.components.schemas as Record<string, { examples?: unknown[] }>,
    )) {
      const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`)
      assert.ok(validate, name)
      for (const example of schema.examples ?? [])
        assert.ok(validate(example), `${name} example: ${ajv.errorsText(validate.errors)}`)
    }
  })

  // docs/api.md#api-reference-page: /docs shows each body's example to start from, never
  // text made up from a pattern
  it('every request body carries an example, valid against its schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true })
    addFormats.default(ajv)
    ajv.addSchema({ $id: 'openapi.json', components: doc.components })
    const missing: string[] = []
    for (const { name, op } of operations())
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        const m = media as {
          schema: { $ref?: string; examples?: unknown[] }
          example?: unknown
          examples?: Record<string, { value: unknown }>
        }
        const ref = m.schema.$ref?.replace('#/components/schemas/', '')
        const examples = [
          ...(m.example === undefined ? [] : [m.example]),
          ...Object.values(m.examples ?? {}).map((e) => e.value),
          ...((ref ? doc.components.schemas[ref].examples : m.schema.examples) ?? []),
        ]
        if (examples.length === 0) missing.push(`${name} (${type})`)
        const validate = ajv.compile(
          ref ? { $ref: `openapi.json#/components/schemas/${ref}` } : m.schema,
        )
        for (const example of examples)
          assert.ok(validate(example), `${name} example: ${ajv.errorsText(validate.errors)}`)
      }
    assert.deepEqual(missing, [], 'request bodies without an example')
  })
})

describe('the document shows the facts each route declares (src/plugins/route-facts.ts)', () => {
  const byKey = '/v1/status-keys/{statusKey}'
  const byId = '/v1/status/{statusId}'

  it('security follows `auth`: a key or the session cookie on the API, none on the public views, sign-in and operations', () => {
    for (const { name, path, op } of operations()) {
      // the views through an invitation link or a private share link: the token is the
      // credential (docs/accounts.md#invitation-links, docs/accounts.md#private-share-links)
      // (the invitation page's Accept button is a signed-in person's form post)
      const anonymous =
        (!path.startsWith('/v1/') && name !== 'POST /invite/{token}') ||
        path.startsWith('/v1/share/') ||
        path.startsWith('/v1/auth/') ||
        name === 'GET /v1/invitations/{token}' ||
        /^\/v1\/share-links\/\{token\}(\/(history|users|events))?$/.test(path)
      assert.deepEqual(
        op.security,
        anonymous ? [] : [{ apiKey: [] }, { bearer: [] }, { session: [] }],
        `${name} security`,
      )
    }
  })

  it('`idempotent`: Idempotency-Key on PATCH by id, POST by key and the plain-text PUT, and only there', () => {
    const honoured = operations()
      .filter(({ op }) => headerParameters(op).includes('Idempotency-Key'))
      .map(({ name }) => name)
    assert.deepEqual(honoured.sort(), [`PATCH ${byId}`, `POST ${byKey}`, `PUT ${byKey}/value`])
    for (const name of honoured) {
      const [method, path] = name.split(' ') as [string, string]
      assert.ok(
        operation(method.toLowerCase(), path).responses['200']?.headers?.['Idempotent-Replayed'],
      )
    }
  })

  it('`conditional`: If-None-Match on the seven single-status operations and the four public views with an ETag, If-Match on the writes', () => {
    const single = operations().filter(({ op }) => headerParameters(op).includes('If-None-Match'))
    assert.deepEqual(single.map(({ name }) => name).sort(), [
      `DELETE ${byKey}`,
      `DELETE ${byId}`,
      'GET /s/{shareId}',
      'GET /s/{shareId}/badge.json',
      'GET /s/{shareId}/badge.svg',
      'GET /v1/share/{shareId}',
      `GET ${byKey}`,
      `GET ${byId}`,
      `PATCH ${byId}`,
      `POST ${byKey}`,
      `PUT ${byKey}/value`,
    ])
    for (const { name, method, op } of single) {
      assert.equal(headerParameters(op).includes('If-Match'), method !== 'get', `${name} If-Match`)
      for (const code of ['200', '201', '304'])
        if (op.responses[code]) assert.ok(op.responses[code].headers?.ETag, `${name} ${code} ETag`)
    }
    assert.ok(!headerParameters(operation('get', '/v1/user/status')).includes('If-None-Match'))
  })

  it('`anonymousLimit`: the anonymous views and sign-in, and not the probes, show the rate-limit headers', () => {
    const limited = operations()
      .filter(
        ({ op }) =>
          op.responses['200']?.headers?.['x-ratelimit-limit'] && op.security?.length === 0,
      )
      .map(({ name }) => name)
    assert.deepEqual(limited.sort(), [
      // the pages e-mailed and printed links open, and their JSON twins (the token is the credential)
      'GET /auth/channel/{token}',
      'GET /auth/link/{token}',
      'GET /auth/reset/{token}',
      'GET /auth/verify/{token}',
      // a public board's wall page, JSON and stream (docs/app.md#boards-and-the-wall)
      'GET /b/{shareId}',
      'GET /b/{shareId}/events',
      'GET /b/{shareId}/json',
      'GET /invite/{token}',
      'GET /l/{token}',
      'GET /l/{token}/badge.svg',
      'GET /s/{shareId}',
      'GET /s/{shareId}/badge.json',
      'GET /s/{shareId}/badge.svg',
      // how people join, read before signing up (docs/api.md#sign-up-sign-in-and-sessions)
      'GET /v1/auth/settings',
      'GET /v1/invitations/{token}',
      'GET /v1/share-links/{token}',
      'GET /v1/share-links/{token}/events',
      'GET /v1/share-links/{token}/history',
      'GET /v1/share-links/{token}/users',
      'GET /v1/share/{shareId}',
      'GET /v1/share/{shareId}/events',
      'GET /v1/share/{shareId}/history',
      'GET /v1/share/{shareId}/users',
      'POST /auth/channel/{token}',
      'POST /auth/verify/{token}',
      'POST /v1/auth/link',
      'POST /v1/auth/login',
      'POST /v1/auth/passkey/login',
      'POST /v1/auth/passkey/options',
      'POST /v1/auth/password-reset/confirm',
      // the first start's setup link (docs/app.md#the-first-start)
      'POST /v1/auth/setup/{token}',
      'POST /v1/auth/setup/{token}/passkey-options',
      'POST /v1/auth/verify-email',
    ])
  })

  it('`located`: the 201s that name what they created have Location', () => {
    const located = operations()
      .filter(({ op }) => op.responses['201']?.headers?.Location)
      .map(({ name }) => name)
    assert.deepEqual(located.sort(), [
      'POST /v1/admin/backups',
      'POST /v1/admin/invitations',
      'POST /v1/boards',
      `POST ${byKey}`,
      'POST /v1/user/api-keys',
      'POST /v1/user/api-keys/{keyId}/rotate',
      'POST /v1/user/channels',
      'POST /v1/user/passkeys',
      `PUT ${byKey}/value`,
    ])
  })

  it('`publicView`, `anyOrigin`: the public views and private links’ views, and only they, are readable from any origin', () => {
    for (const { name, path, op } of operations())
      assert.equal(
        Boolean(op.responses['200']?.headers?.['Access-Control-Allow-Origin']),
        path.startsWith('/v1/share/') ||
          /^\/b\/\{shareId\}\/(json|events)$/.test(path) ||
          /^\/v1\/share-links\/\{token\}(\/(history|users|events))?$/.test(path),
        name,
      )
  })

  it('`bodyOptional`: the bodies that may be left out are not required', () => {
    for (const { name, op } of operations())
      if (op.requestBody)
        assert.equal(
          (op.requestBody as { required?: boolean }).required,
          !name.startsWith('POST /v1/user/api-keys') &&
            name !== 'POST /v1/status/{statusId}/share-links',
          `${name} requestBody.required`,
        )
  })
})
