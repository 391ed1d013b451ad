import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { runScenarios, type Scenario, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus } from '../helpers/sharing.ts'

// docs/api.md#set-a-value-as-plain-text: PUT /v1/status-keys/:statusKey/value with the value
// as the body, for devices and shell scripts (`curl -T-`, `curl -X PUT -d FREE`).

const DOOR = '/v1/status-keys/{door}/value'
const NEW = '/v1/status-keys/{fresh}/value'
const TEXT = { 'content-type': 'text/plain' }
/** What `curl -T-` sends: no Content-Type at all. */
const NO_TYPE = { 'content-type': undefined }
/** What `curl -X PUT -d FREE` sends. */
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

async function makeKey(t: TestApp, owner: TestUser, body: object): Promise<TestUser> {
  const res = await t.request(owner, 'POST', '/v1/user/api-keys', body)
  assert.equal(res.statusCode, 201, res.body)
  return { id: owner.id, key: res.json().key }
}

// one app for the file (a fresh app per scenario made it slow); each scenario gets a door of
// its own and a fresh key, so none sees another's writes
const suite = suiteLifetime()
let shared: Promise<{ t: TestApp; users: Record<string, TestUser> }> | undefined
let scenarios = 0

/** A door of its own (closed, green, named), a device key for it, and keys with fewer scopes. */
async function world(): Promise<ScenarioContext> {
  shared ??= (async () => {
    const t = await makeApp(suite)
    const owner = await t.user({ name: 'Owner' })
    return {
      t,
      users: {
        owner,
        reader: await makeKey(t, owner, { scopes: ['status:read'] }),
        writer: await makeKey(t, owner, { scopes: ['status:read', 'status:write'] }),
      },
    }
  })()
  const { t, users } = await shared
  scenarios += 1
  const key = `door-${scenarios}`
  const door = await createStatus(t, users.owner as TestUser, key, {
    name: 'Front door',
    value: 'closed',
    colorNo: 3,
  })
  return {
    t,
    users: {
      ...users,
      // a device key: reads and sets the value of this door, nothing else
      device: await makeKey(t, users.owner as TestUser, {
        scopes: ['status:read', 'status:value'],
        statusIds: [door.id],
      }),
    },
    vars: { door: key, doorId: door.id, fresh: `lamp-${scenarios}` },
  }
}

/** The door as stored, read back through the API. */
async function door(ctx: ScenarioContext) {
  const res = await ctx.t.request(
    ctx.users.owner ?? null,
    'GET',
    `/v1/status-keys/${ctx.vars.door}`,
  )
  assert.equal(res.statusCode, 200)
  return res.json()
}

/** The door's value is `value` now, and nothing else of it changed. */
const doorIs =
  (value: string, changeCount = 2) =>
  // biome-ignore lint/suspicious/noExplicitAny: the parsed Status body
  async (body: any, ctx: ScenarioContext) => {
    assert.equal(body.value, value)
    assert.equal(body.changeCount, changeCount)
    assert.equal(body.name, 'Front door', 'the name is kept')
    assert.equal(body.colorNo, 3, 'the colour is kept')
    assert.deepEqual(await door(ctx), body)
  }

/** A refused request changed nothing: the door is as made. */
const doorUnchanged = async (_body: unknown, ctx: ScenarioContext) => {
  const stored = await door(ctx)
  assert.equal(stored.value, 'closed')
  assert.equal(stored.changeCount, 1)
}

const nothingCreated = async (_body: unknown, ctx: ScenarioContext) => {
  const res = await ctx.t.request(
    ctx.users.owner ?? null,
    'GET',
    `/v1/status-keys/${ctx.vars.fresh}`,
  )
  assert.equal(res.statusCode, 404)
}

/** The 400 names `value` (and only it), as the same mistake in JSON does. */
const namesValue =
  (message: RegExp) => async (body: { errors: { field: string }[] }, ctx: ScenarioContext) => {
    assert.deepEqual([...new Set(body.errors.map((e) => e.field))], ['value'])
    assert.match(JSON.stringify(body.errors), message)
    await doorUnchanged(body, ctx)
  }

const contentTypes: Scenario[] = [
  {
    name: 'text/plain sets the value and answers the Status (200 updated), with its ETag',
    method: 'PUT',
    url: DOOR,
    body: 'open',
    headers: TEXT,
    expectStatus: 200,
    expect: async (body, ctx, res) => {
      await doorIs('open')(body, ctx)
      assert.equal(res.headers.etag, `"${body.id}.2"`)
      assert.equal(res.headers.location, undefined)
    },
  },
  {
    name: 'text/plain with charset=utf-8 (any case) is text too',
    method: 'PUT',
    url: DOOR,
    body: 'open',
    headers: { 'content-type': 'text/plain; charset=UTF-8' },
    expectStatus: 200,
    expect: doorIs('open'),
  },
  {
    name: 'no Content-Type at all (curl -T-) is plain text',
    method: 'PUT',
    url: DOOR,
    body: 'open\n',
    headers: NO_TYPE,
    expectStatus: 200,
    expect: doorIs('open'),
  },
  {
    name: 'form encoding (curl -X PUT -d FREE) is plain text, taken as sent: never form-decoded',
    method: 'PUT',
    url: DOOR,
    body: 'a+b%20c&d=',
    headers: FORM,
    expectStatus: 200,
    expect: doorIs('a+b%20c&d='),
  },
  {
    name: 'JSON is not taken here: 415 unsupportedMediaType',
    method: 'PUT',
    url: DOOR,
    body: '{"value":"open"}',
    headers: { 'content-type': 'application/json' },
    expectStatus: 415,
    expectErrorCode: 'unsupportedMediaType',
    expect: async (body, ctx) => {
      assert.match(body.message, /text\/plain/)
      await doorUnchanged(body, ctx)
    },
  },
  {
    name: 'application/octet-stream: 415 unsupportedMediaType',
    method: 'PUT',
    url: DOOR,
    body: 'open',
    headers: { 'content-type': 'application/octet-stream' },
    expectStatus: 415,
    expectErrorCode: 'unsupportedMediaType',
    expect: doorUnchanged,
  },
  {
    name: 'a charset other than UTF-8: 415 unsupportedMediaType',
    method: 'PUT',
    url: DOOR,
    body: 'open',
    headers: { 'content-type': 'text/plain; charset=iso-8859-1' },
    expectStatus: 415,
    expectErrorCode: 'unsupportedMediaType',
    expect: doorUnchanged,
  },
  {
    name: 'a compressed body (Content-Encoding: gzip): 415 unsupportedMediaType',
    method: 'PUT',
    url: DOOR,
    body: 'open',
    headers: { ...TEXT, 'content-encoding': 'gzip' },
    expectStatus: 415,
    expectErrorCode: 'unsupportedMediaType',
    expect: doorUnchanged,
  },
]

const bodies: Scenario[] = [
  {
    name: 'one trailing \\n is left out',
    method: 'PUT',
    url: DOOR,
    body: 'open\n',
    headers: TEXT,
    expectStatus: 200,
    expect: doorIs('open'),
  },
  {
    name: 'one trailing \\r\\n is left out',
    method: 'PUT',
    url: DOOR,
    body: 'open\r\n',
    headers: TEXT,
    expectStatus: 200,
    expect: doorIs('open'),
  },
  {
    name: 'only one line break is left out: a second one is refused (400 validationError naming value)',
    method: 'PUT',
    url: DOOR,
    body: 'open\n\n',
    headers: TEXT,
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: namesValue(/control characters/),
  },
  {
    name: 'two lines are refused: a value is one line',
    method: 'PUT',
    url: DOOR,
    body: 'open\nshut',
    headers: TEXT,
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: namesValue(/control characters/),
  },
  {
    name: 'an empty body: 400 emptyBody',
    method: 'PUT',
    url: DOOR,
    body: '',
    headers: TEXT,
    expectStatus: 400,
    expectErrorCode: 'emptyBody',
    expect: doorUnchanged,
  },
  {
    name: 'no body and no Content-Type: 400 emptyBody',
    method: 'PUT',
    url: DOOR,
    expectStatus: 400,
    expectErrorCode: 'emptyBody',
    expect: doorUnchanged,
  },
  {
    name: 'a line break alone is an empty value: 400 validationError naming value',
    method: 'PUT',
    url: DOOR,
    body: '\n',
    headers: TEXT,
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: namesValue(/at least 1 characters/),
  },
  {
    name: 'spaces alone are no value: 400 validationError naming value',
    method: 'PUT',
    url: DOOR,
    body: '   ',
    headers: TEXT,
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: namesValue(/visible character/),
  },
  {
    name: 'at most 10 characters, as in JSON: 10 is fine',
    method: 'PUT',
    url: DOOR,
    body: 'ABCDEFGHIJ\n',
    headers: TEXT,
    expectStatus: 200,
    expect: doorIs('ABCDEFGHIJ'),
  },
  {
    name: '11 characters: 400 validationError naming value',
    method: 'PUT',
    url: DOOR,
    body: 'ABCDEFGHIJK',
    headers: TEXT,
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: namesValue(/at most 10 characters/),
  },
  {
    name: 'a body over 1 KiB: 413 payloadTooLarge, naming the limit',
    method: 'PUT',
    url: DOOR,
    body: 'x'.repeat(1025),
    headers: TEXT,
    expectStatus: 413,
    expectErrorCode: 'payloadTooLarge',
    expect: async (body, ctx) => {
      assert.match(body.message, /1024 bytes/)
      await doorUnchanged(body, ctx)
    },
  },
  {
    name: 'Unicode is kept exactly; lengths count code points (10 emoji)',
    method: 'PUT',
    url: DOOR,
    body: '🟢🟡🔴🟢🟡🔴🟢🟡🔴é\n',
    headers: { 'content-type': 'text/plain; charset=utf-8' },
    expectStatus: 200,
    expect: doorIs('🟢🟡🔴🟢🟡🔴🟢🟡🔴é'),
  },
  {
    name: 'a leading byte-order mark is left out (a text file saved with one)',
    method: 'PUT',
    url: DOOR,
    body: '\uFEFFÖffen\r\n',
    headers: TEXT,
    expectStatus: 200,
    expect: doorIs('Öffen'),
  },
  {
    name: 'bytes that are not UTF-8: 400 validationError naming value, never stored as U+FFFD',
    method: 'PUT',
    url: DOOR,
    body: Buffer.from([0x6f, 0x66, 0x66, 0xe9]), // "offé" in Latin-1
    headers: TEXT,
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: namesValue(/UTF-8/),
  },
]

const createsAndUpdates: Scenario[] = [
  {
    name: 'an unknown key creates the status, named after its key: 201 with Location',
    method: 'PUT',
    url: NEW,
    body: 'ON\n',
    headers: NO_TYPE,
    expectStatus: 201,
    expect: (body, ctx, res) => {
      assert.equal(body.statusKey, ctx.vars.fresh)
      assert.equal(body.name, ctx.vars.fresh)
      assert.equal(body.value, 'ON')
      assert.equal(body.changeCount, 1)
      assert.equal(body.accessType, 'private', 'the defaults')
      assert.equal(res.headers.location, `/v1/status/${body.id}`)
    },
  },
  {
    name: 'the same value again is an update (changeCount + 1), as in JSON',
    method: 'PUT',
    url: DOOR,
    body: 'closed',
    headers: TEXT,
    expectStatus: 200,
    expect: doorIs('closed'),
  },
  {
    name: 'a key too short to be a name cannot create: 400 validationError naming name',
    method: 'PUT',
    url: '/v1/status-keys/x/value',
    body: 'ON',
    headers: TEXT,
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (body) =>
      assert.deepEqual(
        body.errors.map((e: { field: string }) => e.field),
        ['name'],
      ),
  },
  {
    name: 'a malformed key: 400 invalidStatusKey',
    method: 'PUT',
    url: '/v1/status-keys/no%20spaces/value',
    body: 'ON',
    headers: TEXT,
    expectStatus: 400,
    expectErrorCode: 'invalidStatusKey',
  },
  {
    name: 'If-None-Match: * makes it create-only: 412 on an existing status',
    method: 'PUT',
    url: DOOR,
    body: 'open',
    headers: { ...TEXT, 'if-none-match': '*' },
    expectStatus: 412,
    expectErrorCode: 'preconditionFailed',
    expect: doorUnchanged,
  },
  {
    name: 'If-Match with the current ETag updates',
    method: 'PUT',
    url: DOOR,
    body: 'open',
    headers: { ...TEXT, 'if-match': '"{doorId}.1"' },
    expectStatus: 200,
    expect: doorIs('open'),
  },
]

const scopes: Scenario[] = [
  {
    name: 'a device key (status:value) sets the value of its status',
    as: 'device',
    method: 'PUT',
    url: DOOR,
    body: 'open',
    headers: NO_TYPE,
    expectStatus: 200,
    expect: doorIs('open'),
  },
  {
    name: 'a device key cannot create: a key confined to statuses reaches only those (404 notFound saying so)',
    as: 'device',
    method: 'PUT',
    url: NEW,
    body: 'ON',
    headers: NO_TYPE,
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (body, ctx) => {
      assert.match(body.message, /confined to statuses reaches only those, and cannot create one/)
      await nothingCreated(body, ctx)
    },
  },
  {
    name: 'a key with status:write creates',
    as: 'writer',
    method: 'PUT',
    url: NEW,
    body: 'ON',
    headers: TEXT,
    expectStatus: 201,
  },
  {
    name: 'a read-only key: 403 insufficientScope, before the body is read',
    as: 'reader',
    method: 'PUT',
    url: DOOR,
    body: '{"not":"text"}',
    headers: { 'content-type': 'application/json' },
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: doorUnchanged,
  },
  {
    name: 'no key: 401 unauthorized',
    as: null,
    method: 'PUT',
    url: DOOR,
    body: 'open',
    headers: TEXT,
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
    expect: doorUnchanged,
  },
]

const retries: Scenario[] = [
  {
    name: 'Idempotency-Key: a retry gets the first answer, replayed, and changes nothing',
    method: 'PUT',
    url: NEW,
    body: 'ON\n',
    headers: { ...TEXT, 'idempotency-key': 'lamp-on' },
    expectStatus: 201,
    expect: async (first, ctx) => {
      const url = `/v1/status-keys/${ctx.vars.fresh}/value`
      const again = await ctx.t.request(ctx.users.owner ?? null, 'PUT', url, 'ON\n', {
        ...TEXT,
        'idempotency-key': 'lamp-on',
      })
      assert.equal(again.statusCode, 201)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.deepEqual(again.json(), first)
      const stored = await ctx.t.request(
        ctx.users.owner ?? null,
        'GET',
        `/v1/status-keys/${ctx.vars.fresh}`,
      )
      assert.equal(stored.json().changeCount, 1, 'written once')
    },
  },
  {
    name: 'Idempotency-Key reused with another value: 422 idempotencyKeyReused',
    method: 'PUT',
    url: DOOR,
    body: 'open',
    headers: { ...TEXT, 'idempotency-key': 'door-1' },
    expectStatus: 200,
    expect: async (_body, ctx) => {
      const url = `/v1/status-keys/${ctx.vars.door}/value`
      const other = await ctx.t.request(ctx.users.owner ?? null, 'PUT', url, 'shut', {
        ...TEXT,
        'idempotency-key': 'door-1',
      })
      assert.equal(other.statusCode, 422)
      assert.equal(other.json().errorCode, 'idempotencyKeyReused')
      assert.equal((await door(ctx)).value, 'open')
    },
  },
  {
    name: 'Idempotency-Key reused with another end in the query: 422 idempotencyKeyReused',
    method: 'PUT',
    url: `${DOOR}?valueUntil=PT1H&valueAfter=shut`,
    body: 'open',
    headers: { ...TEXT, 'idempotency-key': 'door-2' },
    expectStatus: 200,
    expect: async (_body, ctx) => {
      const url = `/v1/status-keys/${ctx.vars.door}/value?valueUntil=PT2H&valueAfter=shut`
      const other = await ctx.t.request(ctx.users.owner ?? null, 'PUT', url, 'open', {
        ...TEXT,
        'idempotency-key': 'door-2',
      })
      assert.equal(other.statusCode, 422)
      assert.equal(other.json().errorCode, 'idempotencyKeyReused')
      // the same query in another order is the same request: replayed
      const same = await ctx.t.request(
        ctx.users.owner ?? null,
        'PUT',
        `/v1/status-keys/${ctx.vars.door}/value?valueAfter=shut&valueUntil=PT1H`,
        'open',
        { ...TEXT, 'idempotency-key': 'door-2' },
      )
      assert.equal(same.statusCode, 200, same.body)
      assert.equal(same.headers['idempotent-replayed'], 'true')
    },
  },
]

runScenarios('plain-text set: content types', world, contentTypes)
runScenarios('plain-text set: the body', world, bodies)
runScenarios('plain-text set: creates or updates', world, createsAndUpdates)
runScenarios('plain-text set: scopes', world, scopes)
runScenarios('plain-text set: safe retries', world, retries)

describe('plain-text set over a socket', () => {
  it('curl -T- works as sent: chunked, no Content-Type, Expect: 100-continue', async () => {
    const { t, users } = await world()
    const owner = users.owner as TestUser
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = t.app.server.address() as AddressInfo
    const { status, body } = await new Promise<{ status: number; body: string }>(
      (resolve, reject) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'PUT',
          path: '/v1/status-keys/build/value',
          headers: { 'service-api-key': owner.key, expect: '100-continue' },
        })
        req.on('continue', () => req.end('PASSING\n'))
        req.on('response', (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => {
            text += chunk
          })
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
        })
        req.on('error', reject)
        // no Content-Length: Node sends the body chunked, as curl does from stdin
        req.flushHeaders()
      },
    )
    assert.equal(status, 201, body)
    assert.equal(JSON.parse(body).value, 'PASSING')
  })
})

describe('plain-text set in the OpenAPI document', () => {
  it('PUT /v1/status-keys/{statusKey}/value: its operationId, a text/plain or form-encoded body with the value rules and one trailing line break, safe retries', async () => {
    const { t } = await world()
    const doc = (await t.app.inject({ url: '/openapi.json' })).json()
    const op = doc.paths['/v1/status-keys/{statusKey}/value'].put
    assert.equal(op.operationId, 'setStatusValueByKey')
    assert.deepEqual(Object.keys(op.requestBody.content), [
      'text/plain',
      'application/x-www-form-urlencoded',
    ])
    const schema = op.requestBody.content['text/plain'].schema
    assert.equal(schema.type, 'string')
    assert.equal(schema.minLength, 1)
    // the value's 10 characters, and a line break of two
    assert.equal(schema.maxLength, 12)
    const pattern = new RegExp(schema.pattern, 'u')
    for (const sent of ['FREE', 'FREE\n', 'FREE\r\n', '0123456789\n'])
      assert.ok(pattern.test(sent), JSON.stringify(sent))
    for (const sent of ['FREE\n\n', 'FR\nEE', '01234567890', '\n', ' '])
      assert.ok(!pattern.test(sent), JSON.stringify(sent))
    assert.equal(op.requestBody.content['text/plain'].example, 'OCCUPIED')
    assert.deepEqual(Object.keys(op.responses).slice(0, 2), ['200', '201'])
    assert.equal(
      op.responses['201'].content['application/json'].schema.$ref,
      '#/components/schemas/Status',
    )
    const headers = op.parameters.map((p: { $ref?: string; name?: string }) =>
      p.$ref ? doc.components.parameters[p.$ref.split('/').pop() as string].name : p.name,
    )
    assert.ok(headers.includes('Idempotency-Key'), headers.join())
    assert.ok(headers.includes('If-Match'), headers.join())
  })
})
