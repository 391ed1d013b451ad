import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { makeApp } from '../helpers/app.ts'

// OWASP API6:2023 Unrestricted Access to Sensitive Business Flows. statusd's flows that are
// worth automating against it: minting statuses past the plan's limit, inflating a status's
// change count, minting API keys. Each is bounded, also under concurrency: plan maxStatuses
// (402), Idempotency-Key replays (counted once), per-user request rates (429), at most 100
// working keys (409, tested in api4). There is no purchase, sign-up or referral flow.

describe('bounded flows', () => {
  it('the free plan’s 25 statuses hold under 40 racing creates: exactly 25 exist, the rest 402', async (ctx) => {
    const t = await makeApp(ctx)
    const free = await t.user({ plan: 'free' })
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        t.request(free, 'POST', `/v1/status-keys/race-${i}`, { value: 'ON' }),
      ),
    )
    const codes = results.map((r) => r.statusCode)
    assert.equal(codes.filter((c) => c === 201).length, 25)
    assert.ok(
      codes.filter((c) => c !== 201).every((c) => c === 402 || c === 429),
      String(codes),
    )
    assert.equal((await t.request(free, 'GET', '/v1/user/status')).json().length, 25)
  })

  it('retries with one Idempotency-Key count once: a change count cannot be inflated by replays', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user()
    const headers = { 'idempotency-key': 'deploy-42' }
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.request(owner, 'POST', '/v1/status-keys/build', { value: 'PASSING' }, headers),
      ),
    )
    assert.ok(results.every((r) => r.statusCode === 201 || r.statusCode === 200))
    const now = (await t.request(owner, 'GET', '/v1/status-keys/build')).json()
    assert.equal(now.changeCount, 1)
  })

  it('the rate limit holds under concurrency: 100 parallel requests on the free plan, at most 60 served', async (ctx) => {
    const t = await makeApp(ctx)
    const free = await t.user({ plan: 'free' })
    const results = await Promise.all(
      Array.from({ length: 100 }, () => t.request(free, 'GET', '/v1/user/status')),
    )
    const served = results.filter((r) => r.statusCode === 200).length
    assert.equal(served, 60)
    assert.ok(results.every((r) => r.statusCode === 200 || r.statusCode === 429))
  })
})
