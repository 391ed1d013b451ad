import assert from 'node:assert/strict'
import { beforeEach, describe, it, type TestContext } from 'node:test'
import { makeWorld, type World } from './world.ts'

// OWASP API10:2023 Unsafe Consumption of APIs. statusd consumes no third-party API (see
// api7: no outbound client at all). What it does take from its surroundings is treated as
// untrusted input: a proxy's X-Request-Id is kept only when it looks like one (and never
// when it looks like a key), proxy headers (X-Forwarded-*, Host) do not build links or
// change identities, and operator files (PLANS_FILE) are validated at start
// (test/plans/plan-rules.test.ts, test/lib/config.test.ts).

let w: World
// note: beforeEach is given the context of the test it runs for
beforeEach(async (t) => {
  w = await makeWorld(t as TestContext)
})

describe('input from the surroundings', () => {
  it('an upstream X-Request-Id is kept when it looks like one, replaced when not', async () => {
    const kept = await w.t.request(w.owner, 'GET', '/v1/checkAuth', undefined, {
      'x-request-id': 'lb-1234.abc:9',
    })
    assert.equal(kept.headers['x-request-id'], 'lb-1234.abc:9')
    for (const bad of [
      'a'.repeat(65),
      'with space',
      '<script>',
      'x\u00e9',
      w.owner.key,
      '../../etc',
    ]) {
      const res = await w.t.request(w.owner, 'GET', '/v1/checkAuth', undefined, {
        'x-request-id': bad,
      })
      assert.notEqual(res.headers['x-request-id'], bad, bad)
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/)
      assert.ok(!res.body.includes(bad))
    }
  })

  it('Host and X-Forwarded-* never build a link: Location is a path (or PUBLIC_URL)', async () => {
    const res = await w.t.request(
      w.owner,
      'POST',
      '/v1/status-keys/linked',
      { value: 'ON' },
      {
        host: 'evil.example',
        'x-forwarded-host': 'evil.example',
        'x-forwarded-proto': 'https',
      },
    )
    assert.equal(res.statusCode, 201)
    assert.equal(res.headers.location, `/v1/status/${res.json().id}`)
    const page = await w.t.request(w.owner, 'GET', '/v1/user/status?limit=1', undefined, {
      host: 'evil.example',
      'x-forwarded-host': 'evil.example',
    })
    assert.doesNotMatch(String(page.headers.link ?? ''), /evil/)
  })

  it('X-Forwarded-For does not change who the caller is or what they may do', async () => {
    const res = await w.t.request(
      w.stranger,
      'GET',
      `/v1/status/${w.ownerIds.privateStatus}`,
      undefined,
      {
        'x-forwarded-for': '127.0.0.1',
        'x-real-ip': '127.0.0.1',
      },
    )
    assert.equal(res.statusCode, 404)
  })
})
