import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { beforeEach, describe, it, type TestContext } from 'node:test'
import { READ_ONLY_FIELDS } from '../../src/modules/statuses/statuses.schemas.ts'
import {
  apiRoutes,
  fillUrl,
  isStream,
  makeWorld,
  ownerParams,
  plausibleBody,
  snapshot,
  type World,
} from './world.ts'

// OWASP API3:2023 Broken Object Property Level Authorization. Out: no response carries an
// internal field (owner_id, key_hash, a user's e-mail or verified flag, storage column names)
// or a key's hash. In: read-only and internal properties are refused by name (no mass
// assignment), and a refused request changes nothing.

let w: World
// note: beforeEach is given the context of the test it runs for
beforeEach(async (t) => {
  w = await makeWorld(t as TestContext)
})

const INTERNAL =
  /(^|_)(owner_id|key_hash|user_id|created_at|updated_at|change_count|share_id|status_key|color_no|access_type)$|^(ownerId|keyHash|hash|email|verified|password|secret|plan_id)$/

/** Every property name in a JSON value, at any depth. */
function keysOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) keysOf(v, out)
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      out.push(k)
      keysOf(v, out)
    }
  return out
}

describe('no internal field in any response', () => {
  it('a tour of every route (successes and errors): no internal property name, no key hash, no other user id', async () => {
    const sha = (s: string) => createHash('sha256').update(s).digest('hex')
    const forbiddenValues = [sha(w.owner.key), sha(w.stranger.key), w.stranger.id]
    const bodies: { what: string; body: string }[] = []
    const record = (what: string, res: { body: string }) => bodies.push({ what, body: res.body })
    // every route: the ones known here must succeed; routes added later are recorded whatever
    // they answer (their bodies are checked all the same)
    const KNOWN =
      /^\/v1\/(checkAuth|user\/status|user\/api-keys.*|status\/:statusId|status-keys\/:statusKey)$/
    for (const route of apiRoutes(w.t)) {
      if (route.method === 'DELETE' || isStream(route)) continue
      const url = fillUrl(route.url, ownerParams(w))
      const body =
        route.method === 'GET'
          ? undefined
          : route.url.endsWith('/api-keys')
            ? { label: 'tour' }
            : route.url.endsWith('/revoke-all')
              ? { keep: w.ownerIds.keyId }
              : route.url.includes('api-keys')
                ? { graceSeconds: 60 }
                : plausibleBody(route)
      const res = await w.t.request(w.owner, route.method as 'GET', url, body)
      if (KNOWN.test(route.url))
        assert.ok(res.statusCode < 300, `${route.method} ${route.url}: ${res.body}`)
      record(`${route.method} ${route.url}`, res)
    }
    // errors of every kind
    record('401', await w.t.request(null, 'GET', '/v1/user/status'))
    record(
      '403',
      await w.t.request(w.stranger, 'PATCH', `/v1/status/${w.ownerIds.publicStatus}`, {
        value: 'X',
      }),
    )
    record('404', await w.t.request(w.stranger, 'GET', `/v1/status/${w.ownerIds.privateStatus}`))
    record(
      '400',
      await w.t.request(w.owner, 'POST', '/v1/status-keys/x', { owner_id: w.stranger.id }),
    )
    for (const { what, body } of bodies) {
      const keys = keysOf(JSON.parse(body))
      // note: an invitation link shows the address it is bound to, which its owner typed; your
      // own profile names your own address (docs/accounts.md#users), and so does the export of
      // your own data (docs/accounts.md#export-your-data)
      const shown = /\/invitations$|^(GET|PATCH) \/v1\/user$|^GET \/v1\/user\/export$/.test(what)
        ? ['email']
        : []
      for (const k of keys.filter((k) => !shown.includes(k)))
        assert.doesNotMatch(k, INTERNAL, `${what} exposes ${k}`)
      // note: on the user-list routes the owner names the stranger (grants a role by user id,
      // then sees the invitation pending), so the stranger's id is the subject there, not a
      // leak, nor in the export of the owner's data, which lists the roles they granted; key
      // hashes never are
      const allowed = /\/users(\/|$)|\/invitations\/pending$|^GET \/v1\/user\/export$/.test(what)
        ? [w.stranger.id]
        : []
      for (const v of forbiddenValues.filter((v) => !allowed.includes(v)))
        assert.ok(!body.includes(v), `${what} exposes an internal value`)
    }
  })

  it('a status carries exactly the documented fields', async () => {
    const res = await w.t.request(w.owner, 'GET', `/v1/status/${w.ownerIds.privateStatus}`)
    assert.deepEqual(Object.keys(res.json()).sort(), [
      'accessType',
      'accessTypeHistory',
      'accessTypeUserList',
      'changeCount',
      'colorNo',
      'createdAt',
      'description',
      'id',
      'listed',
      'name',
      'palette',
      'shareId',
      'stale',
      'staleAfter',
      'staleSince',
      'statusKey',
      'subscriberCount',
      'type',
      'updatedAt',
      'value',
      'valueAfter',
      'valueUntil',
      'valueUpdatedAt',
    ])
  })
})

describe('no read-only or internal property accepted (mass assignment)', () => {
  const internal = ['owner_id', 'ownerId', 'userId', 'change_count', 'plan', 'verified', 'key_hash']
  const writes = (w: World) => [
    { method: 'POST' as const, url: '/v1/status-keys/secret-room' },
    { method: 'POST' as const, url: '/v1/status-keys/brand-new' },
    { method: 'PATCH' as const, url: `/v1/status/${w.ownerIds.privateStatus}` },
  ]

  for (const field of [...READ_ONLY_FIELDS])
    it(`${field} is refused as read-only on every status write`, async () => {
      for (const { method, url } of writes(w)) {
        const before = await snapshot(w.t)
        const res = await w.t.request(w.owner, method, url, { value: 'ON', [field]: 'x' })
        assert.equal(res.statusCode, 400, `${method} ${url}`)
        assert.equal(res.json().errorCode, 'validationError')
        assert.deepEqual(res.json().errors, [{ field, message: 'is read-only' }])
        assert.equal(await snapshot(w.t), before, 'nothing changed')
      }
    })

  it('internal names are refused as unknown on status and key writes', async () => {
    for (const field of internal) {
      for (const { method, url } of [
        ...writes(w),
        { method: 'POST' as const, url: '/v1/user/api-keys' },
        { method: 'POST' as const, url: `/v1/user/api-keys/${w.ownerIds.keyId}/rotate` },
      ]) {
        const before = await snapshot(w.t)
        const body = url.includes('api-keys')
          ? { [field]: w.stranger.id }
          : { value: 'ON', [field]: w.stranger.id }
        const res = await w.t.request(w.owner, method, url, body)
        assert.equal(res.statusCode, 400, `${field} on ${method} ${url}: ${res.body}`)
        assert.equal(res.json().errors?.[0]?.field, field)
        assert.equal(await snapshot(w.t), before)
      }
    }
  })

  it('an API key cannot be created already revoked, with a chosen secret, or for another user', async () => {
    for (const body of [
      { key: `sdk_${'C'.repeat(40)}` },
      { prefix: 'sdk_AAAA' },
      { revokedAt: null },
      { id: 'mine' },
      { userId: w.stranger.id },
    ]) {
      const res = await w.t.request(w.owner, 'POST', '/v1/user/api-keys', body)
      assert.equal(res.statusCode, 400, JSON.stringify(body))
    }
  })
})
