import assert from 'node:assert/strict'
import net from 'node:net'
import { beforeEach, describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { MAX_ACTIVE_KEYS, MAX_ENDED_KEYS } from '../../src/modules/keys/keys.service.ts'
import { SERVER_TIMEOUTS } from '../../src/plugins/connections.ts'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { makeWorld, type World } from './world.ts'

// OWASP API4:2023 Unrestricted Resource Consumption: body size (16 KiB → 413), header size
// (16 KiB → 431), field lengths, page size (≤ 1000), per-user request rates (plan → 429), the
// number of working API keys (≤ 100 → 409), and server timeouts that cut off slow clients
// (headers within 10 s, the whole request within 30 s, a silent socket after 120 s).

let w: World
// note: beforeEach is given the context of the test it runs for
beforeEach(async (t) => {
  w = await makeWorld(t as TestContext)
})

/** Opens a raw connection to a listening app; resolves with what came back once it closed. */
function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1')
  let received = ''
  socket.on('data', (d) => {
    received += d.toString('latin1')
  })
  socket.on('error', () => {})
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)))
  return { socket, closed }
}

/** A listening app with short timeouts, so slow-client tests take a fraction of a second. */
async function listening(
  ctx: Lifetime,
  timeouts = {
    headersTimeout: 300,
    requestTimeout: 600,
    checkInterval: 50,
    connectionTimeout: 800,
  },
) {
  const base = await makeApp(ctx, { deps: { timeouts } })
  const app = base.app
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as net.AddressInfo).port
  const user = await base.user()
  return { app, port, user }
}

const specBody = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))

describe('sizes', () => {
  it('a body over 16 KiB is 413 payloadTooLarge on every body-carrying route, nothing stored', async () => {
    const big = JSON.stringify({ description: 'x'.repeat(16 * 1024) })
    for (const [method, url] of [
      ['POST', '/v1/status-keys/big'],
      ['PATCH', `/v1/status/${w.ownerIds.privateStatus}`],
      ['POST', '/v1/user/api-keys'],
      ['POST', `/v1/user/api-keys/${w.ownerIds.keyId}/rotate`],
    ] as const) {
      const res = await w.t.request(w.owner, method, url, big)
      assert.equal(res.statusCode, 413, `${method} ${url}`)
      assert.equal(res.json().errorCode, 'payloadTooLarge')
    }
    assert.equal((await w.t.request(w.owner, 'GET', '/v1/status-keys/big')).statusCode, 404)
  })

  it('a chunked body (no Content-Length) over 16 KiB is cut off with 413 too', async (t) => {
    const s = await listening(t)
    const { socket, closed } = rawConnection(s.port)
    socket.write(
      `POST /v1/status-keys/chunked HTTP/1.1\r\nHost: x\r\nservice-api-key: ${s.user.key}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
    )
    const chunk = 'a'.repeat(4096)
    for (let i = 0; i < 6 && !socket.destroyed; i++)
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
    // note: the last chunk without a FIN, as HTTP clients do: a client that half-closes
    // before the answer is written (auth still waiting on PostgreSQL) gets its socket closed
    if (!socket.destroyed) socket.write('0\r\n\r\n')
    const answer = await closed
    assert.match(answer, /^HTTP\/1\.1 413/)
    assert.equal(specBody(answer).errorCode, 'payloadTooLarge')
  })

  it('request headers over 16 KiB are 431 with the error body, and the server goes on', async (t) => {
    const s = await listening(t)
    const { socket, closed } = rawConnection(s.port)
    socket.end(
      `GET /v1/checkAuth HTTP/1.1\r\nHost: x\r\nx-padding: ${'p'.repeat(17 * 1024)}\r\n\r\n`,
    )
    const answer = await closed
    assert.match(answer, /^HTTP\/1\.1 431/)
    const body = specBody(answer)
    assert.equal(body.errorCode, 'requestHeadersTooLarge')
    assert.equal(typeof body.requestId, 'string')
    const ok = await fetch(`http://127.0.0.1:${s.port}/healthz`)
    assert.equal(ok.status, 200)
  })

  it('field lengths are capped by the schema (description 400, value 10, name 42, label 100)', async () => {
    for (const body of [
      { description: 'd'.repeat(401) },
      { value: 'v'.repeat(11) },
      { name: 'n'.repeat(43) },
    ]) {
      const res = await w.t.request(w.owner, 'POST', '/v1/status-keys/caps', body)
      assert.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 40))
    }
    const label = await w.t.request(w.owner, 'POST', '/v1/user/api-keys', {
      label: 'l'.repeat(101),
    })
    assert.equal(label.statusCode, 400)
  })
})

describe('paging', () => {
  it('a page holds at most 1000 entries; limit=1001 and an over-long cursor are refused', async () => {
    assert.equal((await w.t.request(w.owner, 'GET', '/v1/user/status?limit=1000')).statusCode, 200)
    for (const q of ['limit=1001', 'limit=0', 'limit=-1', `cursor=${'c'.repeat(201)}`]) {
      const res = await w.t.request(w.owner, 'GET', `/v1/user/status?${q}`)
      assert.equal(res.statusCode, 400, q)
      assert.equal(res.json().errorCode, 'validationError')
    }
  })
})

describe('per-user request rate (plan requestsPerMinute)', () => {
  it('the 61st request in a minute on the free plan is 429 with Retry-After; errors count too; other users are not affected', async (ctx) => {
    const t = await makeApp(ctx)
    const free = await t.user({ plan: 'free' })
    const other = await t.user({ plan: 'free' })
    for (let i = 0; i < 60; i++) {
      // every other one a client error: refused requests cost the same
      const res =
        i % 2 === 0
          ? await t.request(free, 'GET', '/v1/user/status')
          : await t.request(free, 'POST', '/v1/status-keys/x', { nope: 1 })
      assert.ok(res.statusCode === 200 || res.statusCode === 400, res.body)
    }
    const limited = await t.request(free, 'GET', '/v1/user/status')
    assert.equal(limited.statusCode, 429)
    assert.equal(limited.json().errorCode, 'rateLimited')
    assert.ok(Number(limited.headers['retry-after']) > 0)
    const keys = await t.request(free, 'POST', '/v1/user/api-keys', {})
    assert.equal(keys.statusCode, 429, 'key management is limited too')
    assert.equal((await t.request(other, 'GET', '/v1/user/status')).statusCode, 200)
  })
})

describe('API keys per user', () => {
  it(`at most ${MAX_ACTIVE_KEYS} working keys through the API: then 409 conflict until one is revoked`, async () => {
    const made: string[] = []
    // the owner already has one
    for (let i = 1; i < MAX_ACTIVE_KEYS; i++) {
      const res = await w.t.request(w.owner, 'POST', '/v1/user/api-keys', {})
      assert.equal(res.statusCode, 201, res.body)
      made.push(res.json().id)
    }
    const over = await w.t.request(w.owner, 'POST', '/v1/user/api-keys', {})
    assert.equal(over.statusCode, 409)
    assert.equal(over.json().errorCode, 'conflict')
    // rotation with a grace period would hold one more: refused; without, it is a swap
    const graced = await w.t.request(w.owner, 'POST', `/v1/user/api-keys/${made[0]}/rotate`, {
      graceSeconds: 60,
    })
    assert.equal(graced.statusCode, 409)
    const swapped = await w.t.request(w.owner, 'POST', `/v1/user/api-keys/${made[0]}/rotate`, {})
    assert.equal(swapped.statusCode, 201)
    await w.t.request(w.owner, 'DELETE', `/v1/user/api-keys/${made[1]}`)
    assert.equal((await w.t.request(w.owner, 'POST', '/v1/user/api-keys', {})).statusCode, 201)
    // expired keys do not count either
    await sql`update api_keys set expires_at = '2000-01-01T00:00:00.000Z' where id = ${made[2]}`.execute(
      w.t.database.db,
    )
    assert.equal((await w.t.request(w.owner, 'POST', '/v1/user/api-keys', {})).statusCode, 201)
  })

  it(`at most ${MAX_ACTIVE_KEYS} working keys also when the requests race (one at a time per user on PostgreSQL)`, async () => {
    // the owner already has one; 10 more are asked for at once than the cap allows
    const responses = await Promise.all(
      Array.from({ length: MAX_ACTIVE_KEYS + 9 }, () =>
        w.t.request(w.owner, 'POST', '/v1/user/api-keys', {}),
      ),
    )
    const codes = responses.map((r) => r.statusCode)
    assert.equal(codes.filter((c) => c === 201).length, MAX_ACTIVE_KEYS - 1, `codes: ${codes}`)
    assert.equal(codes.filter((c) => c === 409).length, 10)
    const { count } = await w.t.database.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('user_id', '=', w.owner.id)
      .executeTakeFirstOrThrow()
    assert.equal(Number(count), MAX_ACTIVE_KEYS)
  })
})

describe('ended API keys per user', () => {
  it(`a new key deletes the ended keys beyond the ${MAX_ENDED_KEYS} that ended last: the key list stays bounded`, async () => {
    const revokeNew = async () => {
      const made = await w.t.request(w.owner, 'POST', '/v1/user/api-keys', {})
      assert.equal(made.statusCode, 201, made.body)
      const id: string = made.json().id
      assert.equal(
        (await w.t.request(w.owner, 'DELETE', `/v1/user/api-keys/${id}`)).statusCode,
        204,
      )
      return id
    }
    const first: string[] = []
    for (let i = 0; i < 5; i++) first.push(await revokeNew())
    // the first five end strictly before all the others: an hour before
    await w.t.database.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date(Date.now() - 3_600_000).toISOString() })
      .where('id', 'in', first)
      .execute()
    const later: string[] = []
    for (let i = 0; i < MAX_ENDED_KEYS; i++) later.push(await revokeNew())
    // the other user's ended keys are theirs: never counted or deleted with the owner's
    const otherKey = (await w.t.request(w.stranger, 'POST', '/v1/user/api-keys', {})).json().id
    await w.t.request(w.stranger, 'DELETE', `/v1/user/api-keys/${otherKey}`)

    const last = await w.t.request(w.owner, 'POST', '/v1/user/api-keys', {})
    assert.equal(last.statusCode, 201)
    const list: { id: string; revokedAt: string | null }[] = (
      await w.t.request(w.owner, 'GET', '/v1/user/api-keys')
    ).json()
    const ended = list.filter((k) => k.revokedAt !== null).map((k) => k.id)
    assert.equal(ended.length, MAX_ENDED_KEYS)
    assert.deepEqual(new Set(ended), new Set(later), 'the keys that ended last are kept')
    assert.deepEqual(
      list.filter((k) => k.revokedAt === null).map((k) => k.id),
      [w.ownerIds.keyId, last.json().id],
      'working keys are never deleted',
    )
    const strangerKeys = (await w.t.request(w.stranger, 'GET', '/v1/user/api-keys')).json()
    assert.ok(strangerKeys.some((k: { id: string }) => k.id === otherKey))
  })

  it('an expired key counts as ended: it is deleted once the ended keys that ended later fill the list', async () => {
    const expiring = (
      await w.t.request(w.owner, 'POST', '/v1/user/api-keys', { expiresAt: '2099-01-01T00:00:00Z' })
    ).json().id
    await sql`update api_keys set expires_at = '2000-01-01T00:00:00.000Z' where id = ${expiring}`.execute(
      w.t.database.db,
    )
    for (let i = 0; i < MAX_ENDED_KEYS - 1; i++) {
      const id = (await w.t.request(w.owner, 'POST', '/v1/user/api-keys', {})).json().id
      await w.t.request(w.owner, 'DELETE', `/v1/user/api-keys/${id}`)
    }
    const ids = async () =>
      ((await w.t.request(w.owner, 'GET', '/v1/user/api-keys')).json() as { id: string }[]).map(
        (k) => k.id,
      )
    assert.ok((await ids()).includes(expiring), `${MAX_ENDED_KEYS} ended keys: all kept`)
    const id = (await w.t.request(w.owner, 'POST', '/v1/user/api-keys', {})).json().id
    await w.t.request(w.owner, 'DELETE', `/v1/user/api-keys/${id}`)
    await w.t.request(w.owner, 'POST', '/v1/user/api-keys', {})
    assert.ok(!(await ids()).includes(expiring), 'the key that ended first went')
  })
})

describe('slow clients are cut off', () => {
  it('the server has the documented timeouts', async (t) => {
    const s = await listening(t, SERVER_TIMEOUTS)
    assert.equal(s.app.server.headersTimeout, 10_000)
    assert.equal(s.app.server.requestTimeout, 30_000)
    assert.equal(s.app.server.timeout, 120_000)
    assert.equal(s.app.server.keepAliveTimeout, 72_000)
  })

  it('headers sent a byte at a time (slowloris): 408 requestTimeout and the connection is closed', async (t) => {
    const s = await listening(t)
    const { socket, closed } = rawConnection(s.port)
    const request = `GET /v1/checkAuth HTTP/1.1\r\nHost: x\r\nservice-api-key: ${s.user.key}\r\n\r\n`
    let i = 0
    // bounded: one byte every 40 ms, never the whole request (it is cut off long before)
    const timer = setInterval(() => {
      if (socket.destroyed || i >= request.length - 4) clearInterval(timer)
      else socket.write(request[i++] as string)
    }, 40)
    const answer = await closed
    clearInterval(timer)
    assert.ok(i < request.length - 4, 'the server did not wait for the whole header section')
    assert.match(answer, /^HTTP\/1\.1 408/)
    assert.equal(specBody(answer).errorCode, 'requestTimeout')
  })

  it('a body that never finishes: 408 and closed', async (t) => {
    const s = await listening(t)
    const { socket, closed } = rawConnection(s.port)
    socket.write(
      `POST /v1/status-keys/slow HTTP/1.1\r\nHost: x\r\nservice-api-key: ${s.user.key}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"value":`,
    )
    const answer = await closed
    assert.match(answer, /^HTTP\/1\.1 408/)
    const stored = await fetch(`http://127.0.0.1:${s.port}/v1/status-keys/slow`, {
      headers: { 'service-api-key': s.user.key },
    })
    assert.equal(stored.status, 404, 'nothing was stored')
  })

  it('a connection that sends nothing is closed once the header time is up (408)', async (t) => {
    const s = await listening(t)
    const { closed } = rawConnection(s.port)
    const answer = await closed
    assert.match(answer, /^HTTP\/1\.1 408/)
    assert.equal(specBody(answer).errorCode, 'requestTimeout')
  })
})
