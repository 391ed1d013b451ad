import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KeyCache } from '../../src/modules/keys/key-cache.ts'
import { revokeKey } from '../../src/modules/keys/keys.service.ts'
import { SCOPES } from '../../src/modules/keys/scopes.ts'
import { makeApp } from '../helpers/app.ts'
import { testClock } from '../helpers/clock.ts'

// Issue 5: authenticated keys are cached on the hot path; revocation through the API
// invalidates at once, a change made elsewhere shows within the cache's TTL.

test('key cache: a key revoked through the API stops working on the next request', async (ctx) => {
  const t = await makeApp(ctx, { keyCacheTtlMs: 60_000 })
  const owner = await t.user()
  const spare = (await t.request(owner, 'POST', '/v1/user/api-keys', { label: 'spare' })).json()
  const asSpare = { id: owner.id, key: spare.key }
  assert.equal((await t.request(asSpare, 'GET', '/v1/checkAuth')).statusCode, 200) // now cached
  const revoked = await t.request(owner, 'DELETE', `/v1/user/api-keys/${spare.id}`)
  assert.equal(revoked.statusCode, 204)
  assert.equal((await t.request(asSpare, 'GET', '/v1/checkAuth')).statusCode, 401)
})

test('key cache: a revocation made elsewhere (the CLI) shows once the TTL has passed', async (ctx) => {
  const clock = testClock()
  const t = await makeApp(ctx, { keyCacheTtlMs: 60_000, deps: { clock } })
  const owner = await t.user()
  const keyId = (await t.request(owner, 'GET', '/v1/user/api-keys')).json()[0].id // now cached
  await revokeKey({ db: t.database.db }, keyId) // behind the app's back, like the CLI
  // within the TTL the cached key still works: that is the documented trade-off
  assert.equal((await t.request(owner, 'GET', '/v1/checkAuth')).statusCode, 200)
  clock.advance(59_999)
  assert.equal((await t.request(owner, 'GET', '/v1/checkAuth')).statusCode, 200)
  clock.advance(1)
  assert.equal((await t.request(owner, 'GET', '/v1/checkAuth')).statusCode, 401)
})

test('key cache: entries expire with the TTL and with the key itself; the size is bounded', () => {
  const clock = testClock(0)
  const cache = new KeyCache({ ttlMs: 1000, max: 2, clock })
  const user = {
    id: 'u',
    name: 'u',
    email: null,
    email_key: null,
    plan: 'free',
    verified: 1,
    created_at: '',
    password_hash: null,
    email_verified_at: null,
    admin: 0,
    disabled_at: null,
    locale: null,
  }
  cache.set('h1', {
    user,
    keyId: 'k1',
    limits: { scopes: SCOPES, statusIds: null },
    expiresAt: null,
  })
  clock.advance(999)
  assert.ok(cache.get('h1'))
  clock.advance(1)
  assert.equal(cache.get('h1'), undefined, 'past the TTL')
  // cached at 1000 for a key that expires at 1500, before the TTL would end it
  cache.set('h2', {
    user,
    keyId: 'k2',
    limits: { scopes: SCOPES, statusIds: null },
    expiresAt: 1500,
  })
  clock.advance(499)
  assert.ok(cache.get('h2'))
  clock.advance(1)
  assert.equal(cache.get('h2'), undefined, 'past the key expiry')
  cache.set('a', {
    user,
    keyId: 'a',
    limits: { scopes: SCOPES, statusIds: null },
    expiresAt: null,
  })
  cache.set('b', {
    user,
    keyId: 'b',
    limits: { scopes: SCOPES, statusIds: null },
    expiresAt: null,
  })
  cache.set('c', {
    user,
    keyId: 'c',
    limits: { scopes: SCOPES, statusIds: null },
    expiresAt: null,
  })
  clock.advance(1)
  assert.equal(cache.get('a'), undefined, 'the entry used least recently made room')
  assert.ok(cache.get('c'))
  cache.forgetKey('c')
  assert.equal(cache.get('c'), undefined)
})

test('key cache: with a TTL of 0 nothing is kept', () => {
  const cache = new KeyCache({ ttlMs: 0 })
  const user = {
    id: 'u',
    name: 'u',
    email: null,
    email_key: null,
    plan: 'free',
    verified: 1,
    created_at: '',
    password_hash: null,
    email_verified_at: null,
    admin: 0,
    disabled_at: null,
    locale: null,
  }
  cache.set('h', {
    user,
    keyId: 'k',
    limits: { scopes: SCOPES, statusIds: null },
    expiresAt: null,
  })
  assert.equal(cache.get('h'), undefined)
})
