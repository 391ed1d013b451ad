import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pruneIdempotencyRecords } from '../../src/modules/idempotency/idempotency.service.ts'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'

async function withOneStatus(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const created = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'OCCUPIED' })
  const other = await t.user()
  return {
    t,
    users: { owner, other },
    vars: { statusId: created.json().id, etag: String(created.headers.etag) },
  }
}

const readBack = async (ctx: ScenarioContext) =>
  (await ctx.t.request(ctx.users.owner ?? null, 'GET', `/v1/status/${ctx.vars.statusId}`)).json()

const sendTwice = async (
  ctx: ScenarioContext,
  method: 'PATCH' | 'POST',
  url: string,
  body: unknown,
  key: string,
) => {
  const first = await ctx.t.request(ctx.users.owner ?? null, method, url, body, {
    'idempotency-key': key,
  })
  const second = await ctx.t.request(ctx.users.owner ?? null, method, url, body, {
    'idempotency-key': key,
  })
  return { first, second }
}

runScenarios('ETag and If-Match', withOneStatus, [
  {
    name: 'every single-status response carries an ETag',
    method: 'GET',
    url: '/v1/status/{statusId}',
    expectStatus: 200,
    expect: async (_body, ctx, res) => {
      assert.equal(res.headers.etag, ctx.vars.etag)
      const owner = ctx.users.owner ?? null
      const etagOf = async (
        method: 'GET' | 'HEAD' | 'PATCH' | 'POST',
        url: string,
        body?: unknown,
        headers?: Record<string, string>,
      ) => {
        const r = await ctx.t.request(owner, method, url, body, headers)
        assert.ok(r.statusCode < 400, `${method} ${url}: ${r.statusCode} ${r.body}`)
        assert.match(
          String(r.headers.etag),
          /^"[^"]+"$/,
          `${method} ${url} (${r.statusCode}) has an ETag`,
        )
        // the tag names the Status it came with (304 and HEAD: the current one)
        const current = await ctx.t.request(owner, 'GET', '/v1/status-keys/room-4')
        if (r.statusCode !== 201 || url.endsWith('room-4'))
          assert.equal(r.headers.etag, current.headers.etag, `${method} ${url}: the current tag`)
        return String(r.headers.etag)
      }
      await etagOf('GET', '/v1/status-keys/room-4')
      await etagOf(
        'HEAD',
        '/v1/status/{statusId}'.replace('{statusId}', ctx.vars.statusId as string),
      )
      await etagOf('GET', `/v1/status/${ctx.vars.statusId}`, undefined, {
        'if-none-match': ctx.vars.etag as string,
      })
      await etagOf('PATCH', `/v1/status/${ctx.vars.statusId}`, { value: 'A' })
      await etagOf('POST', '/v1/status-keys/room-4', { value: 'B' })
      const created = await ctx.t.request(
        owner,
        'POST',
        '/v1/status-keys/room-5',
        { value: 'C' },
        { 'idempotency-key': 'etag-1' },
      )
      assert.equal(created.statusCode, 201)
      assert.match(String(created.headers.etag), /^"[^"]+"$/, 'a 201 has an ETag')
      const replayed = await ctx.t.request(
        owner,
        'POST',
        '/v1/status-keys/room-5',
        { value: 'C' },
        { 'idempotency-key': 'etag-1' },
      )
      assert.equal(replayed.headers['idempotent-replayed'], 'true')
      assert.equal(
        replayed.headers.etag,
        created.headers.etag,
        "a replay has the first answer's ETag",
      )
    },
  },
  {
    name: 'If-Match with the current ETag lets POST by key through',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: { value: 'FREE' },
    headers: { 'if-match': '{etag}' },
    expectStatus: 200,
    expect: async (_body, ctx) => assert.equal((await readBack(ctx)).value, 'FREE'),
  },
  {
    name: 'If-Match is honoured on DELETE by key: a stale tag is 412, the current one deletes',
    method: 'DELETE',
    url: '/v1/status-keys/room-4',
    headers: { 'if-match': '"stale"' },
    expectStatus: 412,
    expectErrorCode: 'preconditionFailed',
    expect: async (_body, ctx) => {
      assert.equal((await readBack(ctx)).value, 'OCCUPIED')
      const deleted = await ctx.t.request(
        ctx.users.owner ?? null,
        'DELETE',
        '/v1/status-keys/room-4',
        undefined,
        {
          'if-match': ctx.vars.etag as string,
        },
      )
      assert.equal(deleted.statusCode, 204)
    },
  },
  {
    name: 'If-Match with the current ETag lets the PATCH through',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: 'FREE' },
    headers: { 'if-match': '{etag}' },
    expectStatus: 200,
    expect: (_body, ctx, res) => assert.notEqual(res.headers.etag, ctx.vars.etag),
  },
  {
    name: 'If-Match with a stale ETag is 412 preconditionFailed and changes nothing',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: 'FREE' },
    headers: { 'if-match': '"stale"' },
    expectStatus: 412,
    expectErrorCode: 'preconditionFailed',
    expect: async (_body, ctx) => assert.equal((await readBack(ctx)).changeCount, 1),
  },
  {
    name: 'If-Match is honoured on POST by key',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: { value: 'FREE' },
    headers: { 'if-match': '"stale"' },
    expectStatus: 412,
    expectErrorCode: 'preconditionFailed',
  },
  {
    name: 'If-Match on POST for a key that does not exist yet is 412 (nothing to match)',
    method: 'POST',
    url: '/v1/status-keys/new-key',
    body: { value: 'ON' },
    headers: { 'if-match': '*' },
    expectStatus: 412,
    expectErrorCode: 'preconditionFailed',
  },
  {
    name: 'If-None-Match: * makes POST by key create-only',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: { value: 'FREE' },
    headers: { 'if-none-match': '*' },
    expectStatus: 412,
    expectErrorCode: 'preconditionFailed',
  },
  {
    name: 'If-Match is honoured on DELETE',
    method: 'DELETE',
    url: '/v1/status/{statusId}',
    headers: { 'if-match': '"stale"' },
    expectStatus: 412,
    expectErrorCode: 'preconditionFailed',
    expect: async (_body, ctx) => assert.equal((await readBack(ctx)).value, 'OCCUPIED'),
  },
  {
    name: 'a GET with a matching If-None-Match answers 304',
    method: 'GET',
    url: '/v1/status/{statusId}',
    headers: { 'if-none-match': '{etag}' },
    expectStatus: 304,
  },
])

runScenarios('Idempotency-Key', withOneStatus, [
  {
    name: 'an Idempotency-Key longer than 255 characters is a validationError',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: 'X' },
    headers: { 'idempotency-key': 'k'.repeat(256) },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
])

test('a PATCH retried with the same key and body is replayed, not applied twice', async (t) => {
  const ctx = await withOneStatus(t)
  const url = `/v1/status/${ctx.vars.statusId}`
  const { first, second } = await sendTwice(ctx, 'PATCH', url, { value: 'OCCUPIED' }, 'retry-1')
  assert.equal(first.statusCode, 200)
  assert.equal(second.statusCode, 200)
  assert.equal(second.headers['idempotent-replayed'], 'true')
  assert.deepEqual(second.json(), first.json())
  assert.equal((await readBack(ctx)).changeCount, 2, 'one update, although the value repeats')
})

test('a create-by-key retried with its key replays the 201 with its Location', async (t) => {
  const ctx = await withOneStatus(t)
  const { first, second } = await sendTwice(
    ctx,
    'POST',
    '/v1/status-keys/build-main',
    { value: 'PASSING' },
    'create-1',
  )
  assert.equal(first.statusCode, 201)
  assert.equal(second.statusCode, 201)
  assert.equal(second.headers.location, first.headers.location)
  assert.equal(second.json().changeCount, 1)
  const list = (await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/user/status')).json()
  assert.equal(list.length, 2)
})

test('the same key with a different body is 422 idempotencyKeyReused', async (t) => {
  const ctx = await withOneStatus(t)
  const url = `/v1/status/${ctx.vars.statusId}`
  const headers = { 'idempotency-key': 'retry-2' }
  const owner = ctx.users.owner ?? null
  assert.equal((await ctx.t.request(owner, 'PATCH', url, { value: 'A' }, headers)).statusCode, 200)
  const reused = await ctx.t.request(owner, 'PATCH', url, { value: 'B' }, headers)
  assert.equal(reused.statusCode, 422)
  assert.equal(reused.json().errorCode, 'idempotencyKeyReused')
  assert.equal((await readBack(ctx)).value, 'A')
  // the same body with its keys in another order is the same request
  const reordered = await ctx.t.request(owner, 'PATCH', url, { value: 'A' }, headers)
  assert.equal(reordered.statusCode, 200)
})

test('a retry at the same path spelt another way (trailing slash, %-encoding) is replayed', async (t) => {
  const ctx = await withOneStatus(t)
  const owner = ctx.users.owner ?? null
  const headers = { 'idempotency-key': 'same-path' }
  const first = await ctx.t.request(owner, 'POST', '/v1/status-keys/a-1', { value: 'S' }, headers)
  assert.equal(first.statusCode, 201)
  for (const url of ['/v1/status-keys/a-1/', '/v1/status-keys/a%2D1', '/v1/status-keys/%61-1']) {
    const retry = await ctx.t.request(owner, 'POST', url, { value: 'S' }, headers)
    assert.equal(retry.statusCode, 201, `${url}: ${retry.body}`)
    assert.equal(retry.json().id, first.json().id)
    assert.equal(retry.json().changeCount, first.json().changeCount, 'applied once')
  }
  // another key is another request
  const other = await ctx.t.request(owner, 'POST', '/v1/status-keys/a-2', { value: 'S' }, headers)
  assert.equal(other.statusCode, 422)
})

test('keys are per user: another user may use the same key', async (t) => {
  const ctx = await withOneStatus(t)
  const headers = { 'idempotency-key': 'shared' }
  const a = await ctx.t.request(
    ctx.users.owner ?? null,
    'POST',
    '/v1/status-keys/k-1',
    { value: 'A' },
    headers,
  )
  const b = await ctx.t.request(
    ctx.users.other ?? null,
    'POST',
    '/v1/status-keys/k-1',
    { value: 'A' },
    headers,
  )
  assert.equal(a.statusCode, 201)
  assert.equal(b.statusCode, 201)
  assert.notEqual(a.json().id, b.json().id)
})

test('a failed request stores nothing: the retry with the key is executed', async (t) => {
  const ctx = await withOneStatus(t)
  const url = `/v1/status/${ctx.vars.statusId}`
  const headers = { 'idempotency-key': 'after-412', 'if-match': '"stale"' }
  const owner = ctx.users.owner ?? null
  assert.equal((await ctx.t.request(owner, 'PATCH', url, { value: 'A' }, headers)).statusCode, 412)
  const retry = await ctx.t.request(
    owner,
    'PATCH',
    url,
    { value: 'A' },
    { 'idempotency-key': 'after-412' },
  )
  assert.equal(retry.statusCode, 200)
  assert.equal(retry.json().changeCount, 2)
})

test('concurrent retries with one key apply the update once', async (t) => {
  const ctx = await withOneStatus(t)
  const url = `/v1/status/${ctx.vars.statusId}`
  const responses = await Promise.all(
    Array.from({ length: 10 }, () =>
      ctx.t.request(
        ctx.users.owner ?? null,
        'PATCH',
        url,
        { value: 'BUSY' },
        { 'idempotency-key': 'burst' },
      ),
    ),
  )
  assert.deepEqual(new Set(responses.map((r) => r.statusCode)), new Set([200]))
  assert.equal((await readBack(ctx)).changeCount, 2)
})

test('records past the 24 h window are pruned, a chunk at a time; those within it stay', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const created = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'ON' })
  for (let i = 0; i < 7; i++)
    await t.request(
      owner,
      'PATCH',
      `/v1/status/${created.json().id}`,
      { value: `V${i}` },
      {
        'idempotency-key': `retry-${i}`,
      },
    )
  // five of the seven were stored more than 24 h ago
  const old = new Date(Date.now() - 25 * 60 * 60 * 1000).toISOString()
  await t.database.db
    .updateTable('idempotency_keys')
    .set({ created_at: old })
    .where('key', 'in', ['retry-0', 'retry-1', 'retry-2', 'retry-3', 'retry-4'])
    .execute()
  assert.equal(await pruneIdempotencyRecords(t.database.db, { chunk: 2 }), 5)
  const left = await t.database.db.selectFrom('idempotency_keys').select('key').execute()
  assert.deepEqual(left.map((r) => r.key).sort(), ['retry-5', 'retry-6'])
  assert.equal(await pruneIdempotencyRecords(t.database.db), 0)
})
