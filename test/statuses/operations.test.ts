import assert from 'node:assert/strict'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { makeApp } from '../helpers/app.ts'
import { tempDir } from '../helpers/cleanup.ts'

test('GET /healthz answers 200 while the process is up, with the package version', async (ctx) => {
  const t = await makeApp(ctx)
  const res = await t.request(null, 'GET', '/healthz')
  assert.equal(res.statusCode, 200)
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8'))
  assert.match(pkg.version, /^\d+\.\d+\.\d+(-[\w.]+)?$/, 'package.json has a semver version')
  assert.deepEqual(res.json(), { status: 'ok', version: pkg.version })
})

test('GET /readyz answers 200 when storage is reachable', async (ctx) => {
  const t = await makeApp(ctx)
  assert.equal((await t.request(null, 'GET', '/readyz')).statusCode, 200)
})

test('GET /metrics exposes Prometheus metrics by route pattern', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const created = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'ON' })
  await t.request(owner, 'PATCH', `/v1/status/${created.json().id}`, { value: 'OFF' })
  // answered without a route: an unknown path, and a URL refused before routing
  await t.request(null, 'GET', '/nope')
  for (let i = 0; i < 2; i++) await t.request(null, 'GET', '/v1/share/%ZZ')
  const res = await t.request(null, 'GET', '/metrics')
  assert.equal(res.statusCode, 200)
  assert.match(
    res.body,
    /http_requests_total\{method="GET",route="unmatched",status_code="404"\} 1/,
  )
  assert.match(
    res.body,
    /http_requests_total\{method="GET",route="unmatched",status_code="400"\} 2/,
  )
  assert.match(String(res.headers['content-type']), /^text\/plain/)
  assert.match(
    res.body,
    /http_requests_total\{method="PATCH",route="\/v1\/status\/:statusId",status_code="200"\} 1/,
  )
  assert.match(res.body, /process_cpu_seconds_total/)
  assert.ok(!res.body.includes(created.json().id), 'ids never become label values')
})

test('GET /metrics reports the SQLite database and log file sizes (file-backed SQLite only)', async (ctx) => {
  const dir = tempDir(ctx, 'statusd-metrics-')
  const file = join(dir, 'statusd.db')
  const t = await makeApp(ctx, { databaseUrl: `sqlite:${file}` })
  const owner = await t.user()
  const created = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'ON' })
  await t.request(owner, 'PATCH', `/v1/status/${created.json().id}`, { value: 'OFF' })
  const files = () => ({ database: statSync(file).size, log: statSync(`${file}-wal`).size })
  // note: nothing writes here, but a second after the last write the checkpoint thread
  // copies the log into the database file, and on a slow machine that may fall between
  // the scrape and the reads: a scrape counts when the files were the same on both sides
  let seen = files()
  let body = ''
  for (let tries = 1; ; tries++) {
    body = (await t.request(null, 'GET', '/metrics')).body
    const now = files()
    if (now.database === seen.database && now.log === seen.log) break
    assert.ok(tries < 5, 'the files stop changing')
    seen = now
  }
  const gauge = (name: string) => Number(body.match(new RegExp(`^${name} (\\d+)$`, 'm'))?.[1])
  assert.ok(seen.log > 0, 'the writes above are in the log')
  assert.equal(gauge('statusd_sqlite_wal_bytes'), seen.log)
  assert.equal(gauge('statusd_sqlite_database_bytes'), seen.database)
  // in memory, or on PostgreSQL, there are no such files to report
  const other = await makeApp(ctx)
  assert.doesNotMatch((await other.request(null, 'GET', '/metrics')).body, /statusd_sqlite_/)
})

test('GET /openapi.json is OpenAPI 3.1 generated from the validating schemas', async (ctx) => {
  const t = await makeApp(ctx)
  const doc = (await t.request(null, 'GET', '/openapi.json')).json()
  assert.match(doc.openapi, /^3\.1/)
  const patch = doc.paths['/v1/status/{statusId}'].patch
  // the body is the named StatusInput schema
  const ref = patch.requestBody.content['application/json'].schema.$ref
  assert.equal(ref, '#/components/schemas/StatusInput')
  const body = doc.components.schemas.StatusInput
  assert.equal(body.properties.value.maxLength, 10)
  assert.equal(body.additionalProperties, false)
  assert.ok(doc.components.securitySchemes.apiKey)
  // what the document says matches what the routes do
  assert.equal(doc.paths['/v1/user/api-keys'].post.requestBody.required, false, 'no body: {}')
  assert.equal(doc.paths['/v1/user/api-keys/{keyId}/rotate'].post.requestBody.required, false)
  assert.equal(doc.paths['/v1/status-keys/{statusKey}'].post.requestBody.required, true)
  assert.ok(!JSON.stringify(doc).includes('x-body-optional'), 'the marker stays internal')
  for (const path of ['/v1/status/{statusId}', '/v1/status-keys/{statusKey}'])
    assert.ok(doc.paths[path].get.responses['304'], `${path}: 304 Not Modified`)
  for (const [path, type] of [
    ['/s/{shareId}', 'text/html'],
    ['/s/{shareId}/badge.svg', 'image/svg+xml'],
  ] as const)
    for (const code of ['200', '404', '503'])
      assert.ok(doc.paths[path].get.responses[code].content[type], `${path} ${code} ${type}`)
})

test('the OpenAPI document names the headers the API reads and sends, and the API sends them', async (ctx) => {
  const t = await makeApp(ctx)
  const doc = (await t.request(null, 'GET', '/openapi.json')).json()
  const params = (method: string, path: string) =>
    (doc.paths[path][method].parameters ?? []).map((p: { $ref?: string; name?: string }) =>
      p.$ref ? doc.components.parameters[p.$ref.split('/').pop() as string].name : p.name,
    )
  assert.deepEqual(
    params('patch', '/v1/status/{statusId}').filter((n: string) => n !== 'statusId'),
    ['If-Match', 'If-None-Match', 'Idempotency-Key'],
  )
  assert.ok(params('post', '/v1/status-keys/{statusKey}').includes('Idempotency-Key'))
  assert.ok(params('get', '/v1/status/{statusId}').includes('If-None-Match'))
  const key = doc.paths['/v1/status-keys/{statusKey}'].post.parameters.find(
    (p: { name?: string }) => p.name === 'statusKey',
  )
  assert.ok(new RegExp(key.schema.pattern).test('room-4.b_~'))
  assert.ok(!new RegExp(key.schema.pattern).test('room 4'))

  // every header a response is documented with is sent (the optional ones when they apply),
  // and every one of these headers sent is documented
  const KNOWN = [
    'etag',
    'location',
    'link',
    'idempotent-replayed',
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
    'x-request-id',
    'access-control-allow-origin',
  ]
  const check = (
    method: string,
    path: string,
    res: { statusCode: number; headers: Record<string, unknown> },
    optional: string[] = [],
  ) => {
    const response = doc.paths[path][method].responses[String(res.statusCode)]
    assert.ok(response, `${method} ${path} documents ${res.statusCode}`)
    const documented = Object.keys(response.headers ?? {}).map((h) => h.toLowerCase())
    for (const h of documented)
      if (!optional.includes(h))
        assert.ok(res.headers[h] !== undefined, `${method} ${path} ${res.statusCode} sends ${h}`)
    for (const h of KNOWN)
      if (res.headers[h] !== undefined)
        assert.ok(documented.includes(h), `${method} ${path} ${res.statusCode} documents ${h}`)
  }
  const owner = await t.user({ plan: 'pro' }) // a plan with a request limit
  const once = { 'idempotency-key': 'openapi-headers-1' }
  const body = { value: 'A', accessType: 'public' }
  const created = await t.request(owner, 'POST', '/v1/status-keys/room-4', body, once)
  const byKey = '/v1/status-keys/{statusKey}'
  const byId = '/v1/status/{statusId}'
  check('post', byKey, created, ['idempotent-replayed'])
  const replay = await t.request(owner, 'POST', '/v1/status-keys/room-4', body, once)
  assert.equal(replay.headers['idempotent-replayed'], 'true')
  check('post', byKey, replay)
  const { id, shareId } = created.json()
  check('post', byKey, await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'B' }), [
    'idempotent-replayed',
  ])
  const twice = { 'idempotency-key': 'openapi-headers-2' }
  await t.request(owner, 'PATCH', `/v1/status/${id}`, { value: 'C' }, twice)
  check('patch', byId, await t.request(owner, 'PATCH', `/v1/status/${id}`, { value: 'C' }, twice))
  const read = await t.request(owner, 'GET', `/v1/status/${id}`)
  check('get', byId, read)
  check(
    'get',
    byId,
    await t.request(owner, 'GET', `/v1/status/${id}`, undefined, {
      'if-none-match': String(read.headers.etag),
    }),
  )
  check('get', byKey, await t.request(owner, 'GET', '/v1/status-keys/room-4'))
  await t.request(owner, 'POST', '/v1/status-keys/room-5', { value: 'D' })
  const list = await t.request(owner, 'GET', '/v1/user/status?limit=1')
  assert.ok(list.headers.link, 'a page that is not the last has a Link')
  check('get', '/v1/user/status', list)
  check(
    'get',
    '/v1/status/{statusId}/history',
    await t.request(owner, 'GET', `/v1/status/${id}/history?limit=1`),
  )
  check('get', '/v1/share/{shareId}', await t.request(null, 'GET', `/v1/share/${shareId}`))
  const made = await t.request(owner, 'POST', '/v1/user/api-keys', {})
  check('post', '/v1/user/api-keys', made)
  check(
    'post',
    '/v1/user/api-keys/{keyId}/rotate',
    await t.request(owner, 'POST', `/v1/user/api-keys/${made.json().id}/rotate`, {}),
  )
  check('delete', byKey, await t.request(owner, 'DELETE', '/v1/status-keys/room-5'))
  const refused = await t.request(null, 'GET', `/v1/status/${id}`)
  assert.ok(refused.headers['www-authenticate'])
  assert.ok(doc.paths[byId].get.responses['4XX'].headers['WWW-Authenticate'])
})

test('API responses are marked no-store, nosniff and unframeable', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  for (const res of [
    await t.request(owner, 'GET', '/v1/user/status'),
    await t.request(null, 'GET', '/v1/user/status'),
    // refused before routing, so before the /v1 hooks
    await t.request(owner, 'GET', '/v1/status/%zz'),
  ]) {
    assert.equal(res.headers['cache-control'], 'no-store')
    assert.equal(res.headers['referrer-policy'], 'no-referrer')
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/)
  }
})

test('GET /docs serves the reference over the same document, as plain HTML', async (ctx) => {
  const t = await makeApp(ctx)
  const page = await t.request(null, 'GET', '/docs')
  assert.equal(page.statusCode, 200)
  assert.match(String(page.headers['content-type']), /text\/html/)
  assert.match(page.body, /<details class="op" id="updateStatus">/)
  assert.doesNotMatch(page.body, /<script/)
  const cssUrl = /<link rel="stylesheet" href="([^"]+)"/.exec(page.body)?.[1] as string
  const css = await t.request(null, 'GET', cssUrl)
  assert.equal(css.statusCode, 200)
  assert.match(String(css.headers['content-type']), /text\/css/)
  const doc = (await t.request(null, 'GET', '/docs/json')).json()
  const openapi = (await t.request(null, 'GET', '/openapi.json')).json()
  assert.deepEqual(doc.paths, openapi.paths)
  // a file the UI does not have is the app's own 404, with the error body
  const missing = await t.request(null, 'GET', '/docs/static/nope.js')
  assert.equal(missing.statusCode, 404)
  assert.equal(missing.json().errorCode, 'notFound')
})

test('every route schema compiles (they compile on first use, so a broken one shows here)', async (ctx) => {
  const t = await makeApp(ctx)
  // validators and serializers of every route; none has run yet but the ones above
  assert.ok(t.app.compileSchemas() > 100)
  assert.equal(t.app.compileSchemas(), 0, 'each compiles once')
  const page = await t.request(null, 'GET', '/v1/user/status')
  assert.equal(page.statusCode, 401)
})
