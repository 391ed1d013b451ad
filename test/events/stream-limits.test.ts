import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import type { AppDeps } from '../../src/app.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { createStatus } from '../helpers/sharing.ts'
import { SseTestClient, waitUntil } from '../helpers/sse.ts'

// Finding 1 of the second hardening round (docs/security.md#hardening): one client opened
// 996 anonymous streams and took every file descriptor. Live streams are capped per client
// IP (anonymous) and per user (keyed): docs/sharing.md#live-updates-server-sent-events.

const CAP = 3

/** An app listening on 127.0.0.1 with a small stream cap, and a public status to watch. */
async function liveApp(ctx: Lifetime, deps: Partial<AppDeps> = {}) {
  const t: TestApp = await makeApp(ctx, {
    deps: { streamsPerClient: CAP, sse: { heartbeatMs: 60_000 }, ...deps },
  })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  const owner = await t.user()
  const s = await createStatus(t, owner, 'room-4', { value: 'FREE', accessType: 'public' })
  const open: SseTestClient[] = []
  ctx.after(() => {
    for (const c of open) c.close()
  })
  /** Opens a stream (from `localAddress`, another client) and keeps it for the cleanup. */
  const connect = async (
    url: string,
    headers: Record<string, string> = {},
    localAddress?: string,
  ) => {
    const client = await SseTestClient.connect(`${base}${url}`, headers, { localAddress })
    open.push(client)
    return client
  }
  return { t, base, owner, s, connect, share: `/v1/share/${s.shareId}/events` }
}

/** A refused stream: 429 tooManyStreams with the error body and Retry-After. */
async function assertTooManyStreams(client: SseTestClient) {
  assert.equal(client.status, 429)
  assert.match(String(client.response.headers['content-type']), /^application\/json/)
  assert.match(String(client.response.headers['retry-after']), /^\d+$/)
  const body = JSON.parse(await client.text())
  assert.equal(body.errorCode, 'tooManyStreams')
  assert.equal(body.requestId, client.response.headers['x-request-id'])
}

describe('finding 1: unbounded live streams (STREAMS_PER_CLIENT)', () => {
  it('one client gets STREAMS_PER_CLIENT anonymous streams, the next is 429 tooManyStreams; another client and /healthz are still served', async (ctx) => {
    const { base, connect, share } = await liveApp(ctx)
    for (let i = 0; i < CAP; i++) {
      const client = await connect(share)
      assert.equal(client.status, 200, `stream ${i + 1} of ${CAP}`)
      await client.nextEvent()
    }
    await assertTooManyStreams(await connect(share))
    const other = await connect(share, {}, '127.0.0.2')
    assert.equal(other.status, 200, 'another client still gets a stream')
    assert.equal((await fetch(`${base}/healthz`)).status, 200)
  })

  it('a stream that ends, however it ends, lets one more in', async (ctx) => {
    const { t, owner, s, connect, share } = await liveApp(ctx)
    const clients = []
    for (let i = 0; i < CAP; i++) clients.push(await connect(share))
    await assertTooManyStreams(await connect(share))
    // the client goes away
    clients[0]?.close()
    await waitUntil(async () => {
      const next = await connect(share)
      if (next.status === 200) clients.push(next)
      return next.status === 200
    }, 'a stream closed by its client frees its place')
    await assertTooManyStreams(await connect(share))
    // the server ends them (the status goes private): every place is free again
    const hidden = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'private' })
    assert.equal(hidden.statusCode, 200)
    // note: ended before the status is public again; a stream re-checked after that would stay
    await Promise.all(clients.slice(1).map((client) => client.ended))
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'public' })
    await waitUntil(async () => (await connect(share)).status === 200, 'ended streams are freed')
    for (let i = 1; i < CAP; i++) assert.equal((await connect(share)).status, 200)
    await assertTooManyStreams(await connect(share))
  })

  it("a user's cap counts across its keys, and apart from its IP's anonymous streams", async (ctx) => {
    const { t, owner, s, connect, share } = await liveApp(ctx)
    const second = await createApiKey(t.database.db, owner.id)
    const url = `/v1/status/${s.id}/events`
    for (let i = 0; i < CAP; i++) {
      const key = i % 2 === 0 ? owner.key : second.key
      assert.equal((await connect(url, { 'service-api-key': key })).status, 200)
    }
    await assertTooManyStreams(await connect(url, { 'service-api-key': second.key }))
    await assertTooManyStreams(await connect(url, { 'service-api-key': owner.key }))
    // another user on the same address has a cap of its own, and so has the address itself
    const other = await t.user()
    assert.equal((await connect(url, { 'service-api-key': owner.key })).status, 429)
    const theirs = await createStatus(t, other, 'desk', { value: 'x' })
    const otherUrl = `/v1/status/${theirs.id}/events`
    assert.equal((await connect(otherUrl, { 'service-api-key': other.key })).status, 200)
    assert.equal((await connect(share)).status, 200)
    // a revoked key's stream ends, and gives its place back
    const revoked = await t.request(owner, 'DELETE', `/v1/user/api-keys/${second.id}`)
    assert.equal(revoked.statusCode, 204)
    await waitUntil(
      async () => (await connect(url, { 'service-api-key': owner.key })).status === 200,
      "the revoked key's stream frees its place",
    )
    await assertTooManyStreams(await connect(url, { 'service-api-key': owner.key }))
  })

  it('with TRUST_PROXY, X-Forwarded-For clients are counted apart; without it, they are one', async (ctx) => {
    const forwarded = (ip: string) => ({ 'x-forwarded-for': ip })
    const untrusted = await liveApp(ctx)
    for (let i = 0; i < CAP; i++)
      assert.equal(
        (await untrusted.connect(untrusted.share, forwarded(`203.0.113.${i}`))).status,
        200,
      )
    await assertTooManyStreams(await untrusted.connect(untrusted.share, forwarded('203.0.113.99')))

    const trusted = await liveApp(ctx, { trustProxy: '127.0.0.1' })
    for (let i = 0; i < CAP; i++)
      assert.equal((await trusted.connect(trusted.share, forwarded('203.0.113.1'))).status, 200)
    await assertTooManyStreams(await trusted.connect(trusted.share, forwarded('203.0.113.1')))
    assert.equal((await trusted.connect(trusted.share, forwarded('203.0.113.2'))).status, 200)
  })
})
