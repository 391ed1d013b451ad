// `node scripts/api-examples.ts`: the examples of docs/api.md and of the OpenAPI document,
// recorded from a real run. It starts statusd (in-memory SQLite, listening on a socket), makes
// the requests the examples show, in their order, and writes what came back: each block
// between `<!-- example: <name> -->` and `<!-- /example -->` in docs/api.md, and the
// named schemas' examples in src/plugins/openapi-examples.json (openapi.ts puts them in the
// document). `--check` writes nothing and fails when either is not what a run gives:
// test/openapi/api-examples.test.ts runs it, so the examples cannot go stale.
//
// The output is the same on every run: the time (Date, node:test's mock timers, which the
// service's clock reads too) stands still and moves a fixed step before each request, every
// request sends its own request id, and the ids the
// service draws at random (statuses, share ids, users, keys) are replaced, wherever they
// show (bodies, ETag, Location, the cursor in Link), by fixed ones of the same form.
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mock } from 'node:test'
import { buildApp } from '../src/app.ts'
import { createDatabase } from '../src/db/create-database.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { createApiKey } from '../src/modules/keys/keys.service.ts'
import { DEFAULT_PLANS } from '../src/modules/plans/plans.ts'
import { createUser } from '../src/modules/users/users.service.ts'
import { USER_LIMIT_WINDOW_MS } from '../src/plugins/rate-limit.ts'

const ROOT = new URL('..', import.meta.url)
const DOCS = new URL('docs/api.md', ROOT)
const DOCUMENT_EXAMPLES = new URL('src/plugins/openapi-examples.json', ROOT)
const check = process.argv.includes('--check')

/** The time of the run: 2026-11-22 09:00 UTC, moved `STEP_MS` before each request. */
const START = Date.parse('2026-11-22T09:00:00.000Z')
const STEP_MS = 37
mock.timers.enable({ apis: ['Date'], now: START })
const clock = { now: () => Date.now() }

interface Recorded {
  status: number
  statusText: string
  /** In the order sent, names in lower case. */
  headers: [string, string][]
  body: string
}

const database = createDatabase('sqlite::memory:')
await migrateToLatest(database.db)
const app = await buildApp({ database, plans: DEFAULT_PLANS, clock, logger: false })
await app.listen({ port: 0, host: '127.0.0.1' })
const { port } = app.server.address() as AddressInfo
// an operator (docs/api.md#operators), whose key holds every scope
const admin = await createUser(database.db, DEFAULT_PLANS, {
  name: 'admin',
  plan: 'pro',
  verified: true,
  admin: true,
})
const { key } = await createApiKey(database.db, admin.id)

let requests = 0
/** A request over the socket, as curl sends it (its headers as given, no others). */
function send(
  method: string,
  path: string,
  { body, headers = {} }: { body?: string; headers?: Record<string, string> } = {},
): Promise<Recorded> {
  mock.timers.tick(STEP_MS)
  requests += 1
  const requestId = uuidOf(`request ${requests}`)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { 'service-api-key': key, 'x-request-id': requestId, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const headers: [string, string][] = []
          for (let i = 0; i < res.rawHeaders.length; i += 2)
            headers.push([
              (res.rawHeaders[i] as string).toLowerCase(),
              res.rawHeaders[i + 1] as string,
            ])
          resolve({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? '',
            headers,
            body: Buffer.concat(chunks).toString('utf8'),
          })
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
const json = (value: unknown) => ({
  body: JSON.stringify(value),
  headers: { 'content-type': 'application/json' },
})

// Every command docs/api.md shows, in its order (each recorded answer's name is the marker of
// its block): a reader who runs them one after the other sees these answers.
const recorded = new Map<string, { response: Recorded; as: 'http' | 'json' }>()
const record = (name: string, response: Recorded, as: 'http' | 'json') => {
  recorded.set(name, { response, as })
  return response
}

const created = record(
  'create-by-key',
  await send(
    'POST',
    '/v1/status-keys/room-4',
    json({ name: 'Meeting room 4', value: 'OCCUPIED', colorNo: 2 }),
  ),
  'http',
)
const id = JSON.parse(created.body).id as string
record(
  'update-by-key',
  await send('POST', '/v1/status-keys/room-4', json({ value: 'OCCUPIED' })),
  'json',
)
record(
  'create-without-value',
  await send('POST', '/v1/status-keys/lamp-x', json({ colorNo: 1 })),
  'json',
)
record('name-required', await send('POST', '/v1/status-keys/x', json({ value: 'ON' })), 'json')
await send('PUT', '/v1/status-keys/room-4/value', { body: 'FREE\n' })
await send('PUT', '/v1/status-keys/room-4/value', {
  body: 'FREE',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
})
record(
  'plain-text-value',
  await send('PUT', '/v1/status-keys/room-4/value', {
    body: 'BUSY\r\n',
    headers: { 'idempotency-key': 'room-4-busy-0915' },
  }),
  'http',
)
await send('GET', '/v1/status-keys/room-4')
record(
  'update-by-id',
  await send('PATCH', `/v1/status/${id}`, json({ value: 'FREE', colorNo: 3 })),
  'json',
)
await send(
  'POST',
  '/v1/status-keys/build-main',
  json({ name: 'Build main', value: 'PASSING', colorNo: 3, accessType: 'public' }),
)
await send(
  'POST',
  '/v1/status-keys/order-1234',
  json({ name: 'Order #1234', value: 'TODAY', colorNo: 1 }),
)
const list = record('list', await send('GET', '/v1/user/status'), 'json')
const first = record('list-first-page', await send('GET', '/v1/user/status?limit=2'), 'http')
const next = /<([^>]+)>; rel="next"/.exec(header(first, 'link') ?? '')?.[1]
if (!next) throw new Error('the first page has no Link to the next')
await send('GET', '/v1/user/status?limit=2')
record('list-next-page', await send('GET', next), 'http')
const read = record('read-by-id', await send('GET', `/v1/status/${id}`), 'http')
await send('GET', '/v1/status-keys/room-4')
record('delete', await send('DELETE', '/v1/status-keys/lamp-x'), 'http')

// docs/api.md#safe-retries-idempotency-key
const retried = {
  ...json({ value: 'FAILING', colorNo: 2 }),
  headers: { 'content-type': 'application/json', 'idempotency-key': 'build-main-run-8812' },
}
record('retry-first', await send('POST', '/v1/status-keys/build-main', retried), 'http')
record('retry-replayed', await send('POST', '/v1/status-keys/build-main', retried), 'http')
record(
  'retry-other-body',
  await send('POST', '/v1/status-keys/build-main', {
    ...retried,
    body: JSON.stringify({ value: 'PASSING', colorNo: 3 }),
  }),
  'json',
)

// docs/api.md#conditional-requests-etag-if-match
const etag = header(await send('GET', `/v1/status/${id}`), 'etag') as string
record(
  'not-modified',
  await send('GET', `/v1/status/${id}`, { headers: { 'if-none-match': etag } }),
  'http',
)
const ifMatch = (value: unknown) => ({
  ...json(value),
  headers: { 'content-type': 'application/json', 'if-match': etag },
})
record(
  'if-match',
  await send('PATCH', `/v1/status/${id}`, ifMatch({ value: 'OCCUPIED', colorNo: 2 })),
  'http',
)
record(
  'if-match-stale',
  await send('PATCH', `/v1/status/${id}`, ifMatch({ value: 'FREE', colorNo: 3 })),
  'http',
)
record(
  'create-only',
  await send('POST', '/v1/status-keys/room-4', {
    ...json({ name: 'Meeting room 4', value: 'FREE' }),
    headers: { 'content-type': 'application/json', 'if-none-match': '*' },
  }),
  'json',
)
// docs/api.md#operators
const invited = record(
  'admin-invite',
  await send('POST', '/v1/admin/invitations', json({ email: 'grace@example.com', name: 'Grace' })),
  'http',
)
await send('POST', '/v1/admin/invitations', json({ email: 'linus@example.org' }))
const graceId = JSON.parse(invited.body).user.id as string
record('admin-users', await send('GET', '/v1/admin/users?q=example&limit=1'), 'http')
record(
  'admin-disable',
  await send('PATCH', `/v1/admin/users/${graceId}`, json({ disabled: true })),
  'json',
)
record(
  'admin-last-operator',
  await send('PATCH', `/v1/admin/users/${admin.id}`, json({ admin: false })),
  'json',
)
record('admin-instance', await send('GET', '/v1/admin/instance'), 'json')

// docs/api.md#security-log
const deploy = await send('POST', '/v1/user/api-keys', json({ label: 'deploy' }))
await send('DELETE', `/v1/user/api-keys/${JSON.parse(deploy.body).id}`)
record('security-events', await send('GET', '/v1/user/security-events?limit=2'), 'http')

// docs/api.md#time-in-each-value
record(
  'history-durations',
  await send('GET', `/v1/status/${id}/history/durations?from=2026-11-22T09:00:00Z`),
  'json',
)
// docs/api.md#channels: a service's token is kept to send with, and never shown
record(
  'create-service-channel',
  await send(
    'POST',
    '/v1/user/channels',
    json({
      type: 'ntfy',
      name: 'On-call phone',
      config: { topic: 'ops-alerts', token: 'tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2' },
    }),
  ),
  'json',
)
await app.close()
mock.timers.reset()

for (const { response } of recorded.values())
  if (response.status >= 500) throw new Error(`${response.status}: ${response.body}`)

function header(response: Recorded, name: string): string | undefined {
  return response.headers.find(([n]) => n === name)?.[1]
}

// --- the same output on every run ---------------------------------------------------------

/** A UUID (v4 in form) derived from `seed`. */
function uuidOf(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'
/** `length` characters of `alphabet` derived from `seed` (the first a letter or digit). */
function fixedId(seed: string, alphabet: string, length: number): string {
  const bytes = createHash('sha256').update(seed).digest()
  let out = ''
  for (let i = 0; out.length < length; i++) {
    const c = alphabet[(bytes[i % bytes.length] as number) % alphabet.length] as string
    out += out.length === 0 && !/[A-Za-z0-9]/.test(c) ? 'A' : c
  }
  return out
}

/** Each random id met, and the fixed one shown in its place. */
const fixed = new Map<string, string>()
const ID_FIELDS = new Set(['id', 'statusId', 'shareId', 'userId', 'keyId'])
function collectIds(value: unknown, field = ''): void {
  if (typeof value === 'string' && ID_FIELDS.has(field) && !fixed.has(value)) {
    const n = fixed.size + 1
    fixed.set(
      value,
      /^[a-z2-7]{8}$/.test(value)
        ? fixedId(`share ${n}`, BASE32, 8)
        : fixedId(`id ${n}`, URL_SAFE, value.length),
    )
  } else if (Array.isArray(value)) for (const v of value) collectIds(v, field)
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) collectIds(v, k)
}
collectIds({ id: admin.id })
for (const { response } of recorded.values())
  if (response.body.startsWith('{') || response.body.startsWith('['))
    collectIds(JSON.parse(response.body))

/** Each one-time link token met (`sdl_…`), and the fixed one shown in its place. */
const tokens = new Map<string, string>()
function fixIds(text: string): string {
  let out = text
  for (const [random, shown] of fixed) out = out.replaceAll(random, shown)
  // links name the address the run listened on: shown as the one the examples use
  out = out.replaceAll(`http://127.0.0.1:${port}`, 'http://127.0.0.1:8080')
  return out.replace(/sdl_[A-Za-z0-9_-]{20,}/g, (token) => {
    let shown = tokens.get(token)
    if (shown === undefined) {
      shown = `sdl_${fixedId(`token ${tokens.size + 1}`, URL_SAFE, token.length - 4)}`
      tokens.set(token, shown)
    }
    return shown
  })
}

/** A header's value as shown: ids fixed, a cursor's too, the rate limit's window whole. */
function fixHeader(name: string, value: string): string {
  if (name === 'x-ratelimit-reset') return String(USER_LIMIT_WINDOW_MS / 1000)
  if (name === 'link')
    return value.replace(/cursor=([A-Za-z0-9_-]+)/, (_, cursor: string) => {
      const decoded = fixIds(Buffer.from(cursor, 'base64url').toString('utf8'))
      return `cursor=${Buffer.from(decoded).toString('base64url')}`
    })
  return fixIds(value)
}

// --- the blocks ---------------------------------------------------------------------------

/** Left out of every listing: they say nothing about the API (docs/api.md#conventions). */
const NEVER_SHOWN = new Set(['date', 'connection', 'keep-alive'])
/** After the first listing, only these: the first shows the headers every answer carries. */
const API_HEADERS = new Set([
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'etag',
  'location',
  'link',
  'idempotent-replayed',
  'retry-after',
  'content-type',
  'x-request-id',
  'content-length',
])

let listings = 0
function block({ response, as }: { response: Recorded; as: 'http' | 'json' }): string {
  const body = fixIds(response.body)
  if (as === 'json') return `\`\`\`json\n${JSON.stringify(JSON.parse(body), null, 2)}\n\`\`\``
  listings += 1
  const shown = response.headers.filter(
    ([name]) => !NEVER_SHOWN.has(name) && (listings === 1 || API_HEADERS.has(name)),
  )
  const lines = [
    `HTTP/1.1 ${response.status} ${response.statusText}`,
    ...shown.map(([name, value]) => `${name}: ${fixHeader(name, value)}`),
  ]
  return `\`\`\`http\n${lines.join('\n')}\n${body ? `\n${body}\n` : ''}\`\`\``
}

const MARKER = /(<!-- example: ([a-z-]+) -->\n)[\s\S]*?(\n<!-- \/example -->)/g
const docs = readFileSync(DOCS, 'utf8')
const blocks = new Map([...recorded].map(([name, example]) => [name, block(example)]))
const unknown: string[] = []
const rewritten = docs.replace(MARKER, (_, open: string, name: string, close: string) => {
  const text = blocks.get(name)
  if (text === undefined) {
    unknown.push(name)
    return `${open}${close}`
  }
  blocks.delete(name)
  return `${open}${text}${close}`
})
if (unknown.length > 0) throw new Error(`docs/api.md names examples no run makes: ${unknown}`)
if (blocks.size > 0)
  throw new Error(`docs/api.md has no place for the examples ${[...blocks.keys()].join(', ')}`)

// the document's examples of the named schemas, from the same run
const fixedJson = (response: Recorded) => JSON.parse(fixIds(response.body))
const documentExamples = `${JSON.stringify(
  {
    Status: fixedJson(read),
    StatusListEntry: fixedJson(list)[0],
    Error: fixedJson(recorded.get('name-required')?.response as Recorded),
  },
  null,
  2,
)}\n`

const stale: string[] = []
if (rewritten !== docs) stale.push('docs/api.md')
let current = ''
try {
  current = readFileSync(DOCUMENT_EXAMPLES, 'utf8')
} catch {
  // none yet
}
if (current !== documentExamples) stale.push('src/plugins/openapi-examples.json')
if (check) {
  if (stale.length > 0) {
    process.stderr.write(
      `api-examples: not what a run gives: ${stale.join(', ')}; run node scripts/api-examples.ts\n`,
    )
    process.exitCode = 1
  }
} else {
  writeFileSync(DOCS, rewritten)
  writeFileSync(DOCUMENT_EXAMPLES, documentExamples)
  process.stdout.write(`api-examples: ${recorded.size} examples from ${requests} requests\n`)
}
