import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AppDeps } from '../../src/app.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { createStatus, makeCast } from '../helpers/sharing.ts'

// Finding 2 of the second hardening round (docs/security.md#hardening-one-client-cannot-take-the-service-down):
// anonymous reads were unthrottled. They are limited per client address
// (docs/api.md#rate-limits), and the badge, the share view and the share page carry
// Cache-Control and an ETag so that caches absorb popular ones (docs/sharing.md#public-views-no-api-key).

const LIMIT = 5

async function setUp(ctx: Lifetime, deps: Partial<AppDeps> = {}) {
  const t: TestApp = await makeApp(ctx, { deps: { anonRequestsPerMinute: LIMIT, ...deps } })
  const { owner, stranger } = await makeCast(t)
  const s = await createStatus(t, owner, 'room-4', {
    value: 'FREE',
    accessType: 'public',
    accessTypeHistory: 'public',
  })
  return { t, owner, stranger, s }
}

const anonymous = (t: TestApp, url: string, headers: Record<string, string> = {}) =>
  t.request(null, 'GET', url, undefined, headers)

describe('finding 2: anonymous reads unthrottled (ANON_REQUESTS_PER_MINUTE)', () => {
  it('the request after ANON_REQUESTS_PER_MINUTE anonymous ones in a minute is 429 rateLimited, with the error body and the rate-limit headers', async (ctx) => {
    const { t, s } = await setUp(ctx)
    const urls = [
      `/v1/share/${s.shareId}`,
      `/v1/share/${s.shareId}/history`,
      `/s/${s.shareId}`,
      `/s/${s.shareId}/badge.svg`,
      '/v1/share/guessed-id',
    ]
    for (let i = 0; i < LIMIT; i++) {
      const res = await anonymous(t, urls[i % urls.length] as string)
      assert.notEqual(res.statusCode, 429, `request ${i + 1} of ${LIMIT}`)
      assert.equal(res.headers['x-ratelimit-limit'], String(LIMIT))
      assert.equal(res.headers['x-ratelimit-remaining'], String(LIMIT - i - 1))
    }
    const refused = await anonymous(t, `/v1/share/${s.shareId}`)
    assert.equal(refused.statusCode, 429)
    assert.equal(refused.headers['x-ratelimit-limit'], String(LIMIT))
    assert.equal(refused.headers['x-ratelimit-remaining'], '0')
    assert.match(String(refused.headers['x-ratelimit-reset']), /^\d+$/)
    assert.match(String(refused.headers['retry-after']), /^[1-9]\d*$/)
    const body = refused.json()
    assert.deepEqual(Object.keys(body).sort(), ['errorCode', 'message', 'requestId'])
    assert.equal(body.errorCode, 'rateLimited')
    assert.equal(body.requestId, refused.headers['x-request-id'])
    // the page and the badge are refused too, in their own form
    for (const url of [`/s/${s.shareId}`, `/s/${s.shareId}/badge.svg`]) {
      const res = await anonymous(t, url)
      assert.equal(res.statusCode, 429, url)
      assert.match(String(res.headers['retry-after']), /^[1-9]\d*$/)
    }
    // the probes are never refused: a flood must not get the instance restarted
    for (const url of ['/healthz', '/readyz'])
      assert.equal((await anonymous(t, url)).statusCode, 200)
  })

  it('keyed requests are unaffected by an anonymous flood from the same address', async (ctx) => {
    const { t, owner, stranger, s } = await setUp(ctx)
    for (let i = 0; i < LIMIT + 3; i++) await anonymous(t, `/v1/share/${s.shareId}`)
    assert.equal((await anonymous(t, `/v1/share/${s.shareId}`)).statusCode, 429)
    const own = await t.request(owner, 'GET', `/v1/status/${s.id}`)
    assert.equal(own.statusCode, 200)
    const read = await t.request(stranger, 'GET', `/v1/status/${s.id}`)
    assert.equal(read.statusCode, 200)
    const write = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    assert.equal(write.statusCode, 200)
  })

  it('with TRUST_PROXY, X-Forwarded-For clients are limited apart', async (ctx) => {
    const { t, s } = await setUp(ctx, { trustProxy: '127.0.0.1' })
    const from = (ip: string) => anonymous(t, `/v1/share/${s.shareId}`, { 'x-forwarded-for': ip })
    for (let i = 0; i < LIMIT; i++) assert.equal((await from('203.0.113.1')).statusCode, 200)
    assert.equal((await from('203.0.113.1')).statusCode, 429)
    assert.equal((await from('203.0.113.2')).statusCode, 200)
  })

  for (const [what, path] of [
    ['the share view', (shareId: string) => `/v1/share/${shareId}`],
    ['the share page', (shareId: string) => `/s/${shareId}`],
    ['the badge', (shareId: string) => `/s/${shareId}/badge.svg`],
  ] as const)
    it(`${what}: Cache-Control and an ETag; If-None-Match with it is 304, and a change to the status makes it miss`, async (ctx) => {
      const { t, owner, s } = await setUp(ctx, { anonRequestsPerMinute: 1000 })
      const url = path(s.shareId)
      const first = await anonymous(t, url)
      assert.equal(first.statusCode, 200)
      assert.equal(first.headers['cache-control'], 'public, no-cache')
      const etag = String(first.headers.etag)
      assert.match(etag, /^"[^"]+"$/, 'a strong ETag')
      const again = await anonymous(t, url, { 'if-none-match': etag })
      assert.equal(again.statusCode, 304)
      assert.equal(again.body, '')
      assert.equal(again.headers.etag, etag)
      const changed = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
      assert.equal(changed.statusCode, 200)
      const after = await anonymous(t, url, { 'if-none-match': etag })
      assert.equal(after.statusCode, 200, 'the old ETag misses')
      assert.notEqual(after.headers.etag, etag)
      assert.match(after.body, /BUSY/)
    })

  it('the share page changes its ETag when what it shows changes without a write to the status (its user list)', async (ctx) => {
    const { t, owner, stranger, s } = await setUp(ctx, { anonRequestsPerMinute: 1000 })
    const made = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, {
      accessTypeUserList: 'public',
    })
    assert.equal(made.statusCode, 200)
    const before = await anonymous(t, `/s/${s.shareId}`)
    const subscribed = await t.request(stranger, 'POST', `/v1/status/${s.id}/subscription`)
    assert.ok(subscribed.statusCode < 300, subscribed.body)
    const after = await anonymous(t, `/s/${s.shareId}`, {
      'if-none-match': String(before.headers.etag),
    })
    assert.equal(after.statusCode, 200, 'a new subscriber shows: the old ETag misses')
    assert.match(after.body, /Stan Stranger/)
  })
})
