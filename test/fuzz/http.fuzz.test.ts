import assert from 'node:assert/strict'
import net from 'node:net'
import { before, it } from 'node:test'
import fc from 'fast-check'
import type { InjectOptions } from 'fastify'
import { ERROR_CODES as ERROR_CODE_LIST } from '../../src/lib/errors.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { reportSeedOnFailure, runSeed } from '../helpers/seed.ts'
import { snapshotTables } from '../helpers/tables.ts'

// Property-based fuzzing (fast-check) of the whole HTTP surface: arbitrary methods, paths,
// query strings, headers and bodies — wrong types, huge numbers, deep nesting, odd Unicode,
// duplicate keys, prototype-pollution keys, very long strings, invalid UTF-8 bytes.
// Properties: never a 5xx; every error is the JSON error body (docs/api.md#errors); a rejected
// request (and any read) leaves every table exactly as it was; Object.prototype stays clean.
//
// FUZZ_RUNS sets the number of cases (npm test: 3000; `npm run fuzz`: 100 000). Every run
// is seeded and prints its seed when it fails: TEST_SEED (or FUZZ_SEED) replays the run, and
// FUZZ_PATH with it (the path fast-check reports) replays only the failing case.

const RUNS = Number(process.env.FUZZ_RUNS || 3000)
const SEED = runSeed()
const PATH = process.env.FUZZ_PATH || undefined
/** fast-check's options for a run on the seed (and path, to replay one case). */
const replay = { seed: SEED, ...(PATH !== undefined && { path: PATH }) }

// every errorCode the API documents (docs/api.md#errors): the list the error schema is built from
const ERROR_CODES = new Set<string>(ERROR_CODE_LIST)

let t: TestApp
const who: Record<string, TestUser | null> = {}
const ids: Record<string, string> = {}
const prototypeNames = Object.getOwnPropertyNames(Object.prototype).sort()

const suite = suiteLifetime()
before(async () => {
  t = await makeApp(suite)
  who.owner = await t.user()
  who.free = await t.user({ plan: 'free' })
  who.other = await t.user()
  who.unverified = await t.user({ verified: false })
  who.none = null
  const mine = await t.request(who.owner, 'POST', '/v1/status-keys/room-4', { value: 'ON' })
  ids.mine = mine.json().id
  ids.etag = String(mine.headers.etag)
  const theirs = await t.request(who.other, 'POST', '/v1/status-keys/theirs', { value: 'X' })
  ids.theirs = theirs.json().id
  const pub = await t.request(who.other, 'POST', '/v1/status-keys/pub', {
    value: 'P',
    accessType: 'public',
  })
  ids.public = pub.json().id
  // keys the fuzzer may revoke or rotate: never the ones it authenticates with
  const spare = await t.request(who.owner, 'POST', '/v1/user/api-keys', { label: 'spare' })
  ids.spareKey = spare.json().id
  ids.foreignKey = (await t.request(who.other, 'GET', '/v1/user/api-keys')).json()[0].id
})

/**
 * Every row of every table (tables added later included), but the history sweep's work in
 * flight: a status deleted by an earlier request has its history removed in the background
 * (docs/operations.md#history-sweep), possibly while a later, rejected request runs.
 */
async function snapshot(): Promise<string> {
  const tables: Record<string, string[]> = JSON.parse(await snapshotTables(t.database.db as never))
  const statuses = new Set(tables.statuses?.map((row) => JSON.parse(row).id as string))
  tables.status_deletions = []
  tables.status_history = (tables.status_history ?? []).filter((row) =>
    statuses.has(JSON.parse(row).status_id),
  )
  return JSON.stringify(tables)
}

// ---- arbitraries -----------------------------------------------------------------------

const oddString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }), // lone surrogates included
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\u200b',
    '\u202e',
    '🟢',
    '👩‍👩‍👧',
    'e\u0301',
    '\ufeff',
    '\ud800',
    // noncharacters, default-ignorables, full-width forms, disguised links (unicode-text.fuzz)
    '\ufffe',
    '\uffff',
    '\ufdd0',
    '\u{10ffff}',
    '\u00ad',
    '\u3164',
    'ＯＮ',
    'ｈｔｔｐｓ://evil.com',
    'example\u3002com/x',
    'example.com\u200b/x',
    'ON\n',
    '%00',
    '../..',
    'null',
    '<script>',
    "' or 1=1 --",
    'x'.repeat(11),
    'y'.repeat(401),
  ),
  fc.integer({ min: 0, max: 20_000 }).map((n) => 'z'.repeat(n)),
)

const oddNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, 1, 12, 13, 2 ** 53 + 1, 1e308, -1e308, 5e-324, 1.5),
  fc.bigInt().map((b) => Number(b)),
)

const FIELDS = [
  'name',
  'type',
  'value',
  'accessType',
  'description',
  'colorNo',
  'accessTypeUserList',
  'accessTypeHistory',
  'label',
  'expiresAt',
  'graceSeconds',
  // read-only and internal names
  'id',
  'shareId',
  'statusKey',
  'changeCount',
  'owner_id',
  'ownerId',
  'userId',
  'plan',
  'verified',
  'key_hash',
  // prototype pollution
  '__proto__',
  'constructor',
  'prototype',
]
const fieldName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...FIELDS) },
  { weight: 1, arbitrary: oddString },
)
const GOOD_VALUES = [
  'text',
  'public',
  'private',
  'owner',
  'owners',
  'ON',
  'Meeting room',
  '2099-01-01T00:00:00Z',
]

const jsonish: fc.Arbitrary<unknown> = fc.letrec<{
  value: unknown
  object: Record<string, unknown>
}>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...GOOD_VALUES),
    oddString,
    oddNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    tie('object'),
  ),
  object: fc.array(fc.tuple(fieldName, tie('value')), { maxLength: 6 }).map((entries) => {
    // built by assignment-free means so '__proto__' stays an own key, as JSON.parse makes it
    const o: Record<string, unknown> = {}
    for (const [k, v] of entries)
      Object.defineProperty(o, k, {
        value: v,
        enumerable: true,
        configurable: true,
        writable: true,
      })
    return o
  }),
})).value

const enc = (text: string) => Buffer.from(text, 'utf8')
/** Percent-encodes; a lone surrogate (not encodable) becomes the bytes of an invalid sequence. */
const pct = (text: string): string => {
  try {
    return encodeURIComponent(text)
  } catch {
    return '%ED%A0%80'
  }
}
/** Nearly valid status input: right names, mostly right values, so writes get through. */
const nearlyValid = fc.record(
  {
    name: fc.oneof(fc.constantFrom('Meeting room', 'Build main'), oddString),
    value: fc.oneof(fc.constantFrom('ON', 'OFF', '80%', '🟢'), oddString),
    accessType: fc.constantFrom('public', 'private', 'secret'),
    description: fc.oneof(fc.constantFrom('', 'see example.com', 'line\nbreak'), oddString),
    colorNo: fc.oneof(fc.integer({ min: 0, max: 13 }), oddNumber),
    accessTypeUserList: fc.constantFrom('public', 'private', 'owner', 'owners', 'nobody'),
    accessTypeHistory: fc.constantFrom('public', 'private', 'owner'),
  },
  { requiredKeys: [] },
)
const keyOptions = fc.record(
  {
    label: fc.oneof(fc.constantFrom('ci', ''), oddString),
    expiresAt: fc.constantFrom('2099-01-01T00:00:00Z', '2000-01-01', 'soon'),
    graceSeconds: fc.oneof(fc.integer({ min: -1, max: 90_000 }), oddNumber),
  },
  { requiredKeys: [] },
)

const body: fc.Arbitrary<Buffer | undefined> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: nearlyValid.map((v) => enc(JSON.stringify(v))) },
  { weight: 1, arbitrary: keyOptions.map((v) => enc(JSON.stringify(v))) },
  { weight: 6, arbitrary: jsonish.map((v) => enc(JSON.stringify(v) ?? 'null')) },
  // duplicate keys, as raw text
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...FIELDS), jsonish, jsonish)
      .map(([k, a, b]) =>
        enc(
          `{${JSON.stringify(k)}:${JSON.stringify(a) ?? 1},${JSON.stringify(k)}:${JSON.stringify(b) ?? 2}}`,
        ),
      ),
  },
  // deep nesting
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 9000 }), fc.constantFrom('[', '{"value":'))
      .map(([depth, open]) =>
        enc(`${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}`),
      ),
  },
  // invalid UTF-8 inside and around JSON
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.uint8Array({ maxLength: 40 }), fc.constantFrom(...FIELDS))
      .map(([bytes, k]) =>
        Buffer.concat([
          enc(`{"${k}":"`),
          Buffer.from(bytes),
          Buffer.from([0xff, 0xc3, 0x28]),
          enc('"}'),
        ]),
      ),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
  // truncated and malformed JSON
  {
    weight: 1,
    arbitrary: fc.tuple(jsonish, fc.nat()).map(([v, cut]) => {
      const text = JSON.stringify(v) ?? 'null'
      return enc(text.slice(0, cut % (text.length + 1)))
    }),
  },
)

const segment = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '{mine}',
      '{theirs}',
      '{public}',
      '{spareKey}',
      '{foreignKey}',
      'room-4',
      'pub',
      'new-key',
    ),
  },
  { weight: 2, arbitrary: oddString.map((s) => pct(s).slice(0, 600)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('%', '%zz', '%00', '%ff%fe', '..', '.', '%2e%2e', '%2F', '*', ''),
  },
)

const PATHS = [
  '/v1/status/$',
  '/v1/status-keys/$',
  '/v1/user/status',
  '/v1/checkAuth',
  '/v1/user/api-keys',
  '/v1/user/api-keys/$',
  '/v1/user/api-keys/$/rotate',
  '/v1/status/$/$',
  '/v1/$',
  '/$',
  '/healthz',
  '/readyz',
  '/openapi.json',
]
const query = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.constantFrom('limit', 'cursor', 'service-api-key', 'api_key', '__proto__', 'x'),
        fc.oneof(
          oddString.map(pct),
          oddNumber.map(String),
          fc.constantFrom('1', '1000', '1001', '0', '-1', 'WyJ4IiwieSJd', '%'),
        ),
      ),
      { maxLength: 4 },
    )
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
)
const url = fc.tuple(fc.constantFrom(...PATHS), segment, segment, query).map(([p, a, b, q]) => {
  const [first, second] = [a, b].map((s) => s.replace(/\{(\w+)\}/, (_, n: string) => ids[n] ?? n))
  let path = p.replace('$', first ?? '')
  path = path.replace('$', second ?? '')
  return path + q
})

const headerValue = fc.oneof(
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 80,
  }),
  fc.string({
    unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
    maxLength: 10,
  }),
)
const headers = fc.record(
  {
    as: fc.oneof(
      { weight: 5, arbitrary: fc.constant('owner') },
      { weight: 3, arbitrary: fc.constantFrom('free', 'other', 'unverified', 'bearer') },
      { weight: 1, arbitrary: fc.constantFrom('none', 'garbage') },
    ),
    contentType: fc.oneof(
      { weight: 6, arbitrary: fc.constant('application/json') },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          'application/json; charset=utf-8',
          'application/json; charset=utf-16',
          'application/json; charset=latin1',
          'APPLICATION/JSON',
          'application/problem+json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          '',
        ),
      },
      { weight: 1, arbitrary: headerValue },
    ),
    ifMatch: fc.oneof(fc.constantFrom('*', '{etag}', 'W/{etag}', '"nope"'), headerValue),
    ifNoneMatch: fc.oneof(fc.constantFrom('*', '{etag}', '"nope"'), headerValue),
    idempotencyKey: headerValue,
    requestId: headerValue,
    methodOverride: fc.constantFrom('DELETE', 'PATCH', 'GET'),
  },
  { requiredKeys: ['as'] },
)

const request = fc.record({
  method: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom<InjectOptions['method']>('GET', 'POST', 'PATCH') },
    {
      weight: 1,
      arbitrary: fc.constantFrom<InjectOptions['method']>(
        'PUT',
        'DELETE',
        'HEAD',
        'OPTIONS',
        'TRACE',
      ),
    },
  ),
  url,
  headers,
  body,
})

// ---- the property --------------------------------------------------------------------

type Case = typeof request extends fc.Arbitrary<infer T> ? T : never

function toInject(c: Case): InjectOptions {
  const h = c.headers
  const out: Record<string, string> = {}
  const user = h.as === 'garbage' || h.as === 'bearer' ? who.owner : who[h.as]
  if (h.as === 'garbage') out['service-api-key'] = 'sdk_notakey'
  else if (h.as === 'bearer' && user) out.authorization = `Bearer ${user.key}`
  else if (user) out['service-api-key'] = user.key
  if (h.contentType !== undefined) out['content-type'] = h.contentType
  const etag = (v: string) => v.replace('{etag}', ids.etag ?? '')
  if (h.ifMatch !== undefined) out['if-match'] = etag(h.ifMatch)
  if (h.ifNoneMatch !== undefined) out['if-none-match'] = etag(h.ifNoneMatch)
  if (h.idempotencyKey !== undefined) out['idempotency-key'] = h.idempotencyKey
  if (h.requestId !== undefined) out['x-request-id'] = h.requestId
  if (h.methodOverride !== undefined) out['x-http-method-override'] = h.methodOverride
  return {
    method: c.method,
    url: c.url,
    headers: out,
    ...(c.body !== undefined && { payload: c.body }),
  }
}

// The pages (share page, link page, invitation and e-mail link pages) answer their errors with
// an HTML page of their own (docs/sharing.md#share-page-and-badge); everything else with the JSON body.
const PAGE_PATH = /^\/(s|l|invite|auth)(\/|\?|$)/

let cases = 0
const statuses = new Map<number, number>()

const property = fc.asyncProperty(request, async (c) => {
  cases += 1
  const options = toInject(c)
  const readOnly = c.method === 'GET' || c.method === 'HEAD' || c.method === 'OPTIONS'
  const before = await snapshot()
  const res = await t.app.inject(options)
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
  const show = () => `${c.method} ${c.url} → ${res.statusCode} ${res.body.slice(0, 300)}`
  assert.ok(res.statusCode < 500, `never a 5xx: ${show()}`)
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeNames)
  const page = PAGE_PATH.test(c.url) && /^text\/html/.test(String(res.headers['content-type']))
  if (page)
    assert.doesNotMatch(res.body, /\bat .+\.(ts|js):\d+|SQLITE|select |insert into/i, show())
  else if (res.statusCode >= 400 && c.method !== 'HEAD') {
    assert.match(String(res.headers['content-type']), /^application\/json/, show())
    const error = JSON.parse(res.body)
    assert.equal(typeof error.message, 'string', show())
    assert.ok(ERROR_CODES.has(error.errorCode), `a documented errorCode: ${show()}`)
    assert.equal(typeof error.requestId, 'string', show())
    assert.equal(error.requestId, res.headers['x-request-id'])
    assert.deepEqual(
      Object.keys(error).filter(
        (k) => !['message', 'errorCode', 'errors', 'requestId'].includes(k),
      ),
      [],
      show(),
    )
    assert.doesNotMatch(res.body, /\bat .+\.(ts|js):\d+|SQLITE|select |insert into/i, show())
  }
  if (res.statusCode >= 400 || readOnly)
    assert.equal(await snapshot(), before, `stored data unchanged: ${show()}`)
})

it(`fuzz: ${RUNS} random requests — no 5xx, documented error bodies, rejected requests change nothing`, async (ctx) => {
  reportSeedOnFailure(ctx, SEED)
  await fc.assert(property, {
    numRuns: RUNS,
    ...replay,
    // note: a failure shrinks to the smallest request that still fails
    endOnFailure: false,
  })
  ctx.diagnostic(
    `${cases} cases; statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
  )
  assert.ok(cases >= RUNS)
  // the fuzzer reached past validation too, not only 400s
  assert.ok(
    [...statuses.keys()].some((s) => s < 300),
    'some requests succeeded',
  )
  assert.ok(statuses.has(404) && statuses.has(400) && statuses.has(401))
})

// ---- raw bytes over a real socket: what Node's HTTP parser sees before Fastify does ----

const SOCKET_RUNS = Math.max(100, Math.round(RUNS / 15))

/** The body of a raw HTTP/1.1 response, chunked transfer coding undone. */
function dechunk(head: string, rest: string): string {
  // note: bytes after a complete request are a second (pipelined) request, whose own answer
  // follows the first one's body: the first body ends where its Content-Length says
  const length = /^content-length:\s*(\d+)/im.exec(head)?.[1]
  if (length !== undefined) return rest.slice(0, Number(length)) // latin1: a char per byte
  if (!/^transfer-encoding:\s*chunked/im.test(head)) return rest
  let out = ''
  let at = 0
  for (let guard = 0; guard < 1000; guard++) {
    const eol = rest.indexOf('\r\n', at)
    if (eol === -1) break
    const size = Number.parseInt(rest.slice(at, eol), 16)
    if (!(size > 0)) break
    out += rest.slice(eol + 2, eol + 2 + size)
    at = eol + 2 + size + 2
  }
  return out
}

/** Sends raw bytes on a fresh connection; resolves with whatever came back when it closed. */
function rawExchange(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let out = ''
    const done = () => resolve(out)
    socket.setTimeout(5000, () => socket.destroy())
    socket.on('data', (d) => {
      out += d.toString('latin1')
    })
    socket.on('close', done)
    socket.on('error', () => {})
    socket.end(bytes)
  })
}

const rawRequest = fc
  .tuple(
    fc.constantFrom('GET', 'POST', 'PATCH', 'G\u0000T', 'get', ''),
    fc.constantFrom('/v1/checkAuth', '/v1/status-keys/room-4', '/healthz', '*', 'http://x/', '/%'),
    fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9', ''),
    fc.array(
      fc.tuple(
        fc.constantFrom(
          'Host',
          'Content-Length',
          'Transfer-Encoding',
          'Content-Type',
          'service-api-key',
          'X-Junk',
          'Bad Header',
          '',
        ),
        fc.oneof(
          fc.constantFrom('chunked', '-1', '99999999999999999999', '5', '0', 'application/json'),
          headerValue,
        ),
      ),
      { maxLength: 6 },
    ),
    fc.constantFrom('\r\n', '\n', '\r'),
    fc.uint8Array({ maxLength: 64 }),
    fc.array(fc.nat({ max: 400 }), { maxLength: 3 }),
  )
  .map(([method, target, version, headerList, eol, tail, flips]) => {
    const head = `${method} ${target} ${version}${eol}${headerList.map(([k, v]) => `${k}: ${v}`).join(eol)}${eol}${eol}`
    const bytes = Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(tail)])
    for (const i of flips) {
      const at = i % Math.max(1, bytes.length)
      if (at < bytes.length) bytes[at] = (bytes[at] ?? 0) ^ 0xff
    }
    return bytes
  })

it(`fuzz: ${SOCKET_RUNS} malformed HTTP requests over a socket — no 5xx, documented error bodies, the server lives on`, async (ctx) => {
  reportSeedOnFailure(ctx, SEED)
  const raw = await makeApp(ctx)
  await raw.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (raw.app.server.address() as net.AddressInfo).port
  await fc.assert(
    fc.asyncProperty(rawRequest, async (bytes) => {
      const answer = await rawExchange(port, bytes)
      for (const m of answer.matchAll(/HTTP\/1\.1 (\d{3})/g))
        assert.ok(Number(m[1]) < 500, `never a 5xx: ${answer.slice(0, 300)}`)
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1])
      if (status >= 400) {
        const head = answer.slice(0, answer.indexOf('\r\n\r\n'))
        const body = dechunk(head, answer.slice(head.length + 4))
        assert.ok(body.length > 0, `an error has a body: ${answer.slice(0, 300)}`)
        {
          const error = JSON.parse(body)
          assert.equal(typeof error.message, 'string', answer)
          assert.equal(typeof error.requestId, 'string', answer)
          assert.ok(ERROR_CODES.has(error.errorCode) || /^request/.test(error.errorCode), answer)
        }
      }
    }),
    { numRuns: SOCKET_RUNS, ...replay },
  )
  const health = await fetch(`http://127.0.0.1:${port}/healthz`)
  assert.equal(health.status, 200, 'the server lives on')
})
