import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { makeApp } from '../helpers/app.ts'
import { defer, type Lifetime, tempDir } from '../helpers/cleanup.ts'
import { runScenarios, type Scenario, type ScenarioContext } from '../helpers/scenarios.ts'

// docs/api.md#errors: every error has a JSON body { message, errorCode, errors?, requestId }, with
// the framework's own failures (bad JSON, wrong media type, oversized body, unknown route,
// malformed URL) answered in the same shape. No stack traces or SQL ever reach a client.

const ERROR_KEYS = new Set(['message', 'errorCode', 'errors', 'requestId'])
const LEAKS = /node_modules|\.ts:\d+|\n\s+at |SQLITE|sqlite|no such table|select |insert into/i

type ErrorBody = {
  message: string
  errorCode: string
  requestId: string
  errors?: { field: string; message: string }[]
}

/**
 * The error body's shape (docs/api.md#errors), the request id echoed in `x-request-id`, nothing
 * internal.
 */
function assertErrorShape(body: ErrorBody, res: { headers: Record<string, unknown> }): void {
  assert.ok(body && typeof body === 'object', 'a JSON object body')
  for (const key of Object.keys(body)) assert.ok(ERROR_KEYS.has(key), `unexpected key ${key}`)
  assert.equal(typeof body.message, 'string')
  assert.ok(body.message.length > 0, 'a message')
  assert.equal(typeof body.errorCode, 'string')
  assert.equal(typeof body.requestId, 'string')
  assert.ok(body.requestId.length > 0, 'a request id')
  assert.equal(res.headers['x-request-id'], body.requestId, 'x-request-id is the body requestId')
  assert.match(String(res.headers['content-type']), /^application\/json/)
  if (body.errors !== undefined) {
    assert.ok(Array.isArray(body.errors))
    for (const e of body.errors) {
      assert.equal(typeof e.field, 'string')
      assert.equal(typeof e.message, 'string')
    }
  }
  assert.doesNotMatch(JSON.stringify(body), LEAKS, 'no stack trace or SQL in the body')
}

async function withStatus(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const res = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'OCCUPIED' })
  assert.equal(res.statusCode, 201)
  return { t, users: { owner }, vars: { statusId: res.json().id, before: res.body } }
}

async function assertUnchanged(ctx: ScenarioContext): Promise<void> {
  const res = await ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/status/${ctx.vars.statusId}`)
  assert.deepEqual(res.json(), JSON.parse(ctx.vars.before ?? ''), 'stored status unchanged')
}

/** A scenario whose error body is checked for the error body's shape and the status left alone. */
const errorScenario = (s: Omit<Scenario, 'expect'> & { extra?: Scenario['expect'] }): Scenario => ({
  ...s,
  expect: async (body, ctx, res) => {
    assertErrorShape(body, res)
    await assertUnchanged(ctx)
    await s.extra?.(body, ctx, res)
  },
})

const patch = { method: 'PATCH' as const, url: '/v1/status/{statusId}' }

runScenarios('framework errors: bodies', withStatus, [
  errorScenario({
    name: 'broken JSON is 400 invalidJson',
    ...patch,
    body: '{"value":',
    expectStatus: 400,
    expectErrorCode: 'invalidJson',
  }),
  errorScenario({
    name: 'JSON with trailing garbage is 400 invalidJson',
    ...patch,
    body: '{"value":"ON"} x',
    expectStatus: 400,
    expectErrorCode: 'invalidJson',
  }),
  errorScenario({
    name: 'single-quoted pseudo-JSON is 400 invalidJson',
    ...patch,
    body: "{'value':'ON'}",
    expectStatus: 400,
    expectErrorCode: 'invalidJson',
  }),
  errorScenario({
    name: 'an empty body sent as JSON is 400 emptyBody',
    ...patch,
    body: '',
    expectStatus: 400,
    expectErrorCode: 'emptyBody',
  }),
  ...['[{"value":"ON"}]', '[]', '"ON"', '3', 'true', 'null'].map((json) =>
    errorScenario({
      name: `a JSON body that is not an object (${json}) is 400 validationError`,
      ...patch,
      body: json,
      expectStatus: 400,
      expectErrorCode: 'validationError',
      extra: (body) => assert.ok(body.errors.length > 0, 'errors[] says what is wrong'),
    }),
  ),
  errorScenario({
    name: 'a validation error lists field and message per problem',
    ...patch,
    body: { colorNo: 'x' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    extra: (body) => assert.equal(body.errors[0].field, 'colorNo'),
  }),
])

test('an empty body sent as application/json is no body: fine where a route takes none', async (t) => {
  const ctx = await withStatus(t)
  const owner = ctx.users.owner ?? null
  const json = { 'content-type': 'application/json' }
  const key = await ctx.t.request(owner, 'POST', '/v1/user/api-keys', undefined, json)
  assert.equal(key.statusCode, 201, key.body)
  const patch = await ctx.t.request(owner, 'PATCH', `/v1/status/${ctx.vars.statusId}`, '', json)
  assert.equal(patch.statusCode, 400)
  assert.equal(patch.json().errorCode, 'emptyBody')
  const del = await ctx.t.request(owner, 'DELETE', `/v1/status/${ctx.vars.statusId}`, '', json)
  assert.equal(del.statusCode, 204, del.body)
})

test('an empty body is no body whatever its Content-Type (curl -d "" sends a form type)', async (t) => {
  const ctx = await withStatus(t)
  const owner = ctx.users.owner ?? null
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']) {
    const headers = { 'content-type': type }
    const key = await ctx.t.request(owner, 'POST', '/v1/user/api-keys', '', headers)
    assert.equal(key.statusCode, 201, `${type}: ${key.body}`)
    const patch = await ctx.t.request(
      owner,
      'PATCH',
      `/v1/status/${ctx.vars.statusId}`,
      '',
      headers,
    )
    assert.equal(patch.statusCode, 400, `${type}: ${patch.body}`)
    assert.equal(patch.json().errorCode, 'emptyBody')
  }
  const headers = { 'content-type': 'text/plain' }
  const del = await ctx.t.request(owner, 'DELETE', `/v1/status/${ctx.vars.statusId}`, '', headers)
  assert.equal(del.statusCode, 204, del.body)
})

runScenarios('media type and size', withStatus, [
  errorScenario({
    name: 'a JSON body sent as text/plain is 415 unsupportedMediaType',
    ...patch,
    body: '{"value":"ON"}',
    headers: { 'content-type': 'text/plain' },
    expectStatus: 415,
    expectErrorCode: 'unsupportedMediaType',
  }),
  errorScenario({
    name: 'a form body is 415 unsupportedMediaType',
    ...patch,
    body: 'value=ON',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    expectStatus: 415,
    expectErrorCode: 'unsupportedMediaType',
  }),
  errorScenario({
    name: 'a multipart body is 415 unsupportedMediaType',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: '--x\r\nContent-Disposition: form-data; name="value"\r\n\r\nON\r\n--x--\r\n',
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
    expectStatus: 415,
    expectErrorCode: 'unsupportedMediaType',
  }),
  ...['application/jsonx', 'application/json-seq', 'text/json'].map((type) =>
    errorScenario({
      name: `a look-alike media type (${type}) is 415 unsupportedMediaType`,
      ...patch,
      body: '{"value":"ON"}',
      headers: { 'content-type': type },
      expectStatus: 415,
      expectErrorCode: 'unsupportedMediaType',
    }),
  ),
  {
    name: 'media types are case-insensitive (RFC 9110): APPLICATION/JSON is fine',
    ...patch,
    body: '{"value":"ON"}',
    headers: { 'content-type': 'APPLICATION/JSON' },
    expectStatus: 200,
  },
  {
    name: 'application/json with a charset parameter is fine',
    ...patch,
    body: '{"value":"ON"}',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    expectStatus: 200,
  },
  ...['utf-8', 'UTF-8', '"utf-8"', 'utf8'].map((charset) => ({
    name: `application/json with charset=${charset} is fine`,
    ...patch,
    body: '{"value":"ON"}',
    headers: { 'content-type': `application/json; charset=${charset}` },
    expectStatus: 200,
  })),
  ...['iso-8859-1', 'utf-16le', 'windows-1252'].map((charset) =>
    errorScenario({
      name: `JSON is UTF-8 (RFC 8259): charset=${charset} is 415 unsupportedMediaType`,
      ...patch,
      body: '{"value":"ON"}',
      headers: { 'content-type': `application/json; charset=${charset}` },
      expectStatus: 415,
      expectErrorCode: 'unsupportedMediaType',
    }),
  ),
  ...['gzip', 'br', 'deflate'].map((coding) =>
    errorScenario({
      name: `a compressed body (Content-Encoding: ${coding}) is 415 unsupportedMediaType`,
      ...patch,
      body: '{"value":"ON"}',
      headers: { 'content-type': 'application/json', 'content-encoding': coding },
      expectStatus: 415,
      expectErrorCode: 'unsupportedMediaType',
    }),
  ),
  {
    name: 'Content-Encoding: identity is no coding at all',
    ...patch,
    body: '{"value":"ON"}',
    headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
    expectStatus: 200,
  },
  ...[
    ['a byte that is never UTF-8 (0xFF)', Buffer.from([0xff, 0xfe])],
    ['Latin-1 "café" (0xE9)', Buffer.from('caf\xe9', 'latin1')],
    ['a surrogate encoded as bytes (CESU-8, ED A0 80)', Buffer.from([0xed, 0xa0, 0x80])],
    ['an overlong encoding of "/" (C0 AF)', Buffer.from([0xc0, 0xaf])],
    ['a truncated sequence (E2 82)', Buffer.from([0xe2, 0x82])],
  ].map(([what, bytes]) =>
    errorScenario({
      name: `a body that is not valid UTF-8 is 400 invalidJson, never stored as U+FFFD: ${what}`,
      ...patch,
      body: Buffer.concat([Buffer.from('{"value":"'), bytes as Buffer, Buffer.from('"}')]),
      expectStatus: 400,
      expectErrorCode: 'invalidJson',
    }),
  ),
  errorScenario({
    name: 'a body over 16 KiB is 413 payloadTooLarge (PATCH)',
    ...patch,
    body: { description: 'x'.repeat(16 * 1024) },
    expectStatus: 413,
    expectErrorCode: 'payloadTooLarge',
  }),
  errorScenario({
    name: 'a body over 16 KiB is 413 payloadTooLarge (POST)',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: { value: 'ON', description: 'x'.repeat(20_000) },
    expectStatus: 413,
    expectErrorCode: 'payloadTooLarge',
  }),
  errorScenario({
    name: 'a body of exactly 16 KiB is within the cap (then fails validation, not size)',
    ...patch,
    body: `{"description":"${'x'.repeat(16 * 1024 - 18)}"}`,
    expectStatus: 400,
    expectErrorCode: 'validationError',
  }),
])

runScenarios('prototype keys are refused, never 500, never polluting', withStatus, [
  ...[
    '{"__proto__":{"polluted":true},"value":"ON"}',
    '{"constructor":{"prototype":{"polluted":true}},"value":"ON"}',
    '{"value":"ON","description":{"__proto__":{"polluted":true}}}',
  ].flatMap((json) =>
    [patch, { method: 'POST' as const, url: '/v1/status-keys/other-key' }].map((route) =>
      errorScenario({
        name: `${json.slice(0, 40)}… is 400 [${route.method}]`,
        ...route,
        body: json,
        expectStatus: 400,
        extra: async (body, ctx) => {
          assert.ok(['invalidJson', 'validationError'].includes(body.errorCode))
          assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype')
          const list = await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/status')
          assert.equal(list.json().length, 1, 'no status created')
        },
      }),
    ),
  ),
])

runScenarios('routing and URL errors', withStatus, [
  errorScenario({
    name: 'an unknown route is 404 notFound JSON',
    as: null,
    method: 'GET',
    url: '/nothing-here',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  }),
  errorScenario({
    name: 'an unknown route under /v1 is 404 notFound JSON, with or without a key',
    method: 'GET',
    url: '/v1/nothing-here',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  }),
  errorScenario({
    name: 'an unknown route names its path in the 404, with API-key-shaped text masked',
    as: null,
    method: 'GET',
    url: '/v1/sdk_AAAAbbbbCCCCddddEEEEffffGGGGhhhhIIIIjjjj/x%73dk_AAAAbbbbCCCCddddEEEEffffGGGGhhhhIIIIjjjj',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    extra: (body) => {
      assert.equal(body.message, 'No route GET /v1/sdk_[redacted]/[redacted]')
      assert.doesNotMatch(JSON.stringify(body), /AAAAbbbb/)
    },
  }),
  errorScenario({
    name: 'an unknown version is 404 notFound JSON',
    method: 'GET',
    url: '/v2/user/status',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  }),
  errorScenario({
    name: 'a method a path does not have is 404 notFound JSON',
    method: 'PUT',
    url: '/v1/status/{statusId}',
    body: { value: 'ON' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
  }),
  errorScenario({
    name: 'a malformed percent-encoding in a status id is 400 JSON',
    method: 'GET',
    url: '/v1/status/%E0%A4%A',
    expectStatus: 400,
  }),
  errorScenario({
    name: 'a malformed percent-encoding in a status key is 400 JSON',
    method: 'POST',
    url: '/v1/status-keys/%ZZ',
    body: { value: 'ON' },
    expectStatus: 400,
  }),
  errorScenario({
    name: 'a malformed URL is 400 JSON even without a key',
    as: null,
    method: 'DELETE',
    url: '/v1/status/%',
    expectStatus: 400,
  }),
  errorScenario({
    name: 'a malformed URL keeps a sane upstream request id',
    method: 'GET',
    url: '/v1/status/%ZZ',
    headers: { 'x-request-id': 'edge-42.a:b_c' },
    expectStatus: 400,
    extra: (body) => assert.equal(body.requestId, 'edge-42.a:b_c'),
  }),
])

runScenarios('request ids', withStatus, [
  {
    name: 'a success response carries a generated x-request-id',
    method: 'GET',
    url: '/v1/status/{statusId}',
    expectStatus: 200,
    expect: (_body, _ctx, res) => assert.match(String(res.headers['x-request-id']), /^\S{8,}$/),
  },
  {
    name: 'a sane upstream x-request-id is kept on a success',
    method: 'GET',
    url: '/v1/status/{statusId}',
    headers: { 'x-request-id': 'lb-7f3a9c' },
    expectStatus: 200,
    expect: (_body, _ctx, res) => assert.equal(res.headers['x-request-id'], 'lb-7f3a9c'),
  },
  errorScenario({
    name: 'a sane upstream x-request-id is kept on an error',
    ...patch,
    body: { colorNo: 0 },
    headers: { 'x-request-id': 'lb-7f3a9c' },
    expectStatus: 400,
    extra: (body) => assert.equal(body.requestId, 'lb-7f3a9c'),
  }),
  ...['has spaces', 'x'.repeat(65), '<script>alert(1)</script>', 'a\u00e9b', ''].map(
    (upstream): Scenario => ({
      name: `an insane upstream x-request-id ${JSON.stringify(upstream.slice(0, 20))} is replaced`,
      method: 'GET',
      url: '/v1/status/{statusId}',
      headers: { 'x-request-id': upstream },
      expectStatus: 200,
      expect: (_body, _ctx, res) => {
        const id = String(res.headers['x-request-id'])
        assert.notEqual(id, upstream)
        assert.match(id, /^[\w.:-]{8,64}$/)
      },
    }),
  ),
])

test('every request gets its own id', async (ctx) => {
  const t = await makeApp(ctx)
  const ids = new Set<string>()
  for (let i = 0; i < 5; i++)
    ids.add(String((await t.request(null, 'GET', '/v1/x')).headers['x-request-id']))
  assert.equal(ids.size, 5)
})

test('a body without any Content-Type is 415 unsupportedMediaType', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  for (const [method, url] of [
    ['POST', '/v1/status-keys/room-4'],
    ['PATCH', '/v1/status/abc'],
  ] as const) {
    const res = await t.app.inject({
      method,
      url,
      headers: { 'service-api-key': owner.key },
      payload: '{"value":"ON"}',
    })
    assert.equal(res.statusCode, 415, res.body)
    assert.equal(res.json().errorCode, 'unsupportedMediaType')
    assertErrorShape(res.json(), res)
  }
  assert.deepEqual((await t.request(owner, 'GET', '/v1/user/status')).json(), [])
})

test('a storage failure is 500 internalError without SQL or stack', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'ON' })
  // a broken schema makes every write to the history fail inside the database driver
  await sql`drop table status_history`.execute(t.database.db)
  const res = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'OFF' })
  assert.equal(res.statusCode, 500, res.body)
  assert.equal(res.json().errorCode, 'internalError')
  assertErrorShape(res.json(), res)
  assert.doesNotMatch(res.body, /status_history|drop|table/i)
})

test('storage that cannot take a write is 503 unavailable, and the service recovers', async (ctx) => {
  const dir = tempDir(ctx, 'statusd-busy-')
  const file = join(dir, 'statusd.db')
  const t = await makeApp(ctx, { databaseUrl: `sqlite:${file}` })
  const other = new SQLite(file)
  defer(ctx, () => other.close())
  const owner = await t.user()
  // note: no waiting for the lock, so the write fails at once instead of after 5 s
  await sql`pragma busy_timeout = 0`.execute(t.database.db)
  other.exec('BEGIN IMMEDIATE') // another process holds the write lock
  const res = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'ON' })
  assert.equal(res.statusCode, 503, res.body)
  assert.equal(res.json().errorCode, 'unavailable')
  assertErrorShape(res.json(), res)
  other.exec('ROLLBACK')
  const again = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'ON' })
  assert.equal(again.statusCode, 201, 'the failed transaction left nothing behind')
  assert.equal(again.json().changeCount, 1)
})

test('an upstream x-request-id shaped like an API key is replaced, never echoed', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  for (const id of [owner.key, `a${owner.key}`, `req-${owner.key}.1`]) {
    const res = await t.request(null, 'GET', '/v1/user/status', undefined, { 'x-request-id': id })
    assert.notEqual(res.headers['x-request-id'], id)
    assert.ok(!String(res.headers['x-request-id']).includes(owner.key))
    assert.ok(!res.body.includes(owner.key))
  }
})

test('a NUL byte in the URL is 400 validationError on every engine, never 500', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  for (const url of ['/v1/status/%00', '/v1/status-keys/a%00b', '/v1/share/%00']) {
    const res = await t.request(owner, 'GET', url)
    assert.equal(res.statusCode, 400, `${url}: ${res.body}`)
    assert.equal(res.json().errorCode, 'validationError')
  }
  // the share page answers in HTML, with the same status
  assert.equal((await t.request(null, 'GET', '/s/%00')).statusCode, 400)
})
