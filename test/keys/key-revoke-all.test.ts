import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { testClock } from '../helpers/clock.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { createStatus } from '../helpers/sharing.ts'
import { SseTestClient } from '../helpers/sse.ts'

// Locking an attacker out (docs/accounts.md#locking-an-attacker-out): revoke-all ends every
// working key of the user but the one kept, in one step, with what is open on them.

async function makeKey(t: TestApp, as: TestUser, body: Record<string, unknown> = {}) {
  const res = await t.request(as, 'POST', '/v1/user/api-keys', body)
  assert.equal(res.statusCode, 201, res.body)
  const made = res.json()
  return { id: as.id, key: made.key as string, keyId: made.id as string }
}

const works = async (t: TestApp, who: TestUser) =>
  (await t.request(who, 'GET', '/v1/checkAuth')).statusCode === 200

/** The owner's full key, two more keys of theirs, and a stranger's key. */
async function keyring(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const stranger = await t.user()
  const ownerKeyId = (await t.request(owner, 'GET', '/v1/user/api-keys')).json()[0].id
  const strangerKeyId = (await t.request(stranger, 'GET', '/v1/user/api-keys')).json()[0].id
  const laptop = await makeKey(t, owner, { label: 'laptop', scopes: ['status:*', 'keys'] })
  const sensor = await makeKey(t, owner, { label: 'sensor', scopes: ['status:value'] })
  const revoked = await makeKey(t, owner, { label: 'old' })
  assert.equal(
    (await t.request(owner, 'DELETE', `/v1/user/api-keys/${revoked.keyId}`)).statusCode,
    204,
  )
  return {
    t,
    users: { owner, stranger, laptop, sensor },
    vars: {
      ownerKeyId,
      strangerKeyId,
      laptopKeyId: laptop.keyId,
      sensorKeyId: sensor.keyId,
      revokedKeyId: revoked.keyId,
    },
  }
}

runScenarios('revoke-all: every working key but the one kept stops working', keyring, [
  {
    name: 'revoke-all with keep: every other working key is revoked; the kept one works',
    as: 'laptop',
    method: 'POST',
    url: '/v1/user/api-keys/revoke-all',
    body: '{"keep":"{laptopKeyId}"}',
    expectStatus: 200,
    expect: async (body, ctx) => {
      // the owner's first key and the sensor; the revoked one was revoked already
      assert.deepEqual(body, { revoked: 2 })
      const { t, users } = ctx
      assert.equal(await works(t, users.laptop as TestUser), true)
      assert.equal(await works(t, users.owner as TestUser), false)
      assert.equal(await works(t, users.sensor as TestUser), false)
      assert.equal(await works(t, users.stranger as TestUser), true, 'another user is untouched')
      const list = (await t.request(users.laptop ?? null, 'GET', '/v1/user/api-keys')).json()
      const working = list.filter((k: { revokedAt: string | null }) => k.revokedAt === null)
      assert.deepEqual(
        working.map((k: { id: string }) => k.id),
        [ctx.vars.laptopKeyId],
      )
    },
  },
  {
    name: 'revoke-all without keep revokes the calling key too',
    as: 'laptop',
    method: 'POST',
    url: '/v1/user/api-keys/revoke-all',
    expectStatus: 200,
    expect: async (body, ctx) => {
      assert.deepEqual(body, { revoked: 3 })
      assert.equal(await works(ctx.t, ctx.users.laptop as TestUser), false)
    },
  },
  {
    name: 'revoke-all keeping a key of someone else: 404, nothing revoked',
    as: 'laptop',
    method: 'POST',
    url: '/v1/user/api-keys/revoke-all',
    body: '{"keep":"{strangerKeyId}"}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) => {
      assert.equal(await works(ctx.t, ctx.users.owner as TestUser), true)
      assert.equal(await works(ctx.t, ctx.users.sensor as TestUser), true)
    },
  },
  {
    name: 'revoke-all keeping a revoked key: 404, nothing revoked',
    as: 'laptop',
    method: 'POST',
    url: '/v1/user/api-keys/revoke-all',
    body: '{"keep":"{revokedKeyId}"}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, ctx) =>
      assert.equal(await works(ctx.t, ctx.users.owner as TestUser), true),
  },
  {
    name: 'revoke-all keeping an id that names nothing: 404',
    as: 'laptop',
    method: 'POST',
    url: '/v1/user/api-keys/revoke-all',
    body: { keep: 'nosuchkey' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'revoke-all needs the keys scope: 403 insufficientScope, nothing revoked',
    as: 'sensor',
    method: 'POST',
    url: '/v1/user/api-keys/revoke-all',
    body: '{"keep":"{sensorKeyId}"}',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: async (_body, ctx) =>
      assert.equal(await works(ctx.t, ctx.users.owner as TestUser), true),
  },
  {
    name: 'revoke-all refuses unknown properties: 400',
    as: 'laptop',
    method: 'POST',
    url: '/v1/user/api-keys/revoke-all',
    body: { keep: 'x', everything: true },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
])

/** An app listening on 127.0.0.1: streams over real sockets. */
async function liveApp(ctx: Lifetime) {
  // a key cache that never ages (its clock stands still): only revoke-all can end the streams
  const t = await makeApp(ctx, {
    keyCacheTtlMs: 600_000,
    deps: { clock: testClock(), sse: { heartbeatMs: 50 } },
  })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  return { t, base }
}

async function openStream(base: string, statusId: string, key: string): Promise<SseTestClient> {
  const stream = await SseTestClient.connect(`${base}/v1/status/${statusId}/events`, {
    'service-api-key': key,
  })
  assert.equal(stream.response.statusCode, 200)
  assert.equal((await stream.nextEvent()).event, 'status')
  return stream
}

async function assertEndedUnauthorized(stream: SseTestClient): Promise<void> {
  const end = await stream.nextEvent()
  assert.equal(end.event, 'unavailable')
  assert.deepEqual(JSON.parse(end.data), { reason: 'unauthorized' })
  await stream.ended
}

describe(`revoke-all over real sockets [${TEST_ENGINE}]`, () => {
  it('revoke-all ends the open streams of every key it revokes, at once, and not the kept key’s', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    const owner = await t.user()
    const s = await createStatus(t, owner, 'stream', { value: 'ON' })
    const a = await makeKey(t, owner)
    const b = await makeKey(t, owner)
    const kept = await makeKey(t, owner, { scopes: ['status:*', 'keys'] })
    const streamA = await openStream(base, s.id, a.key)
    const streamB = await openStream(base, s.id, b.key)
    const streamKept = await openStream(base, s.id, kept.key)
    const res = await t.request(kept, 'POST', '/v1/user/api-keys/revoke-all', {
      keep: kept.keyId,
    })
    assert.deepEqual(res.json(), { revoked: 3 })
    await assertEndedUnauthorized(streamA)
    await assertEndedUnauthorized(streamB)
    // the kept key's stream still hears the status
    assert.equal(
      (await t.request(kept, 'PATCH', `/v1/status/${s.id}`, { value: 'OFF' })).statusCode,
      200,
    )
    const next = await streamKept.nextEvent()
    assert.equal(next.event, 'status')
    assert.equal(JSON.parse(next.data).value, 'OFF')
    streamKept.close()
  })

  it('the leaked key, end to end: a second key made with a leaked one outlives its rotation, and revoke-all locks it out', async (ctx) => {
    const { t, base } = await liveApp(ctx)
    // the victim's first key, made by the operator: every scope
    const victim = await t.user({ name: 'Victim' })
    const secret = await createStatus(t, victim, 'diary', { value: 'private' })
    const [first] = (await t.request(victim, 'GET', '/v1/user/api-keys')).json()
    // the attacker, holding the leaked key, makes a second key that looks like the victim's own
    const leaked = { id: victim.id, key: victim.key }
    const planted = await makeKey(t, leaked, { label: 'first start' })
    const spying = await openStream(base, secret.id, planted.key)
    // the victim rotates the leaked key: the planted one still reads the private status
    const rotated = await t.request(victim, 'POST', `/v1/user/api-keys/${first.id}/rotate`)
    assert.equal(rotated.statusCode, 201)
    const fresh = { id: victim.id, key: rotated.json().key as string }
    assert.equal((await t.request(leaked, 'GET', '/v1/checkAuth')).statusCode, 401)
    const read = await t.request(planted, 'GET', `/v1/status/${secret.id}`)
    assert.equal(read.statusCode, 200, 'rotation alone does not lock the attacker out')
    // revoke-all, keeping the fresh key: the planted key stops, its stream ends
    const all = await t.request(fresh, 'POST', '/v1/user/api-keys/revoke-all', {
      keep: rotated.json().id,
    })
    assert.equal(all.statusCode, 200, all.body)
    assert.deepEqual(all.json(), { revoked: 1 })
    await assertEndedUnauthorized(spying)
    assert.equal((await t.request(planted, 'GET', `/v1/status/${secret.id}`)).statusCode, 401)
    assert.equal((await t.request(fresh, 'GET', `/v1/status/${secret.id}`)).statusCode, 200)
  })

  it('the leaked key, scoped: a leaked device key cannot plant a key at all', async (ctx) => {
    const t = await makeApp(ctx)
    const victim = await t.user()
    const door = await createStatus(t, victim, 'door', { value: 'shut' })
    const device = await makeKey(t, victim, { scopes: ['status:value'], statusIds: [door.id] })
    const planted = await t.request(device, 'POST', '/v1/user/api-keys', {
      label: 'first start',
      scopes: ['status:value'],
      statusIds: [door.id],
    })
    assert.equal(planted.statusCode, 403)
    assert.equal(planted.json().errorCode, 'insufficientScope')
    assert.match(planted.json().message, /\bkeys\b/)
    const keys = (await t.request(victim, 'GET', '/v1/user/api-keys')).json()
    assert.equal(keys.length, 2, 'the victim’s key and the device key, nothing more')
  })
})
