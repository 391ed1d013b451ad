import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { createStatus } from '../helpers/sharing.ts'
import { SseTestClient } from '../helpers/sse.ts'

// docs/accounts.md#private-share-links: revoking a link ends the streams opened through it at
// once, on every instance. Two apps on one PostgreSQL database stand for two instances: the
// revocation through B is announced on the database's event bus, and A's stream ends.

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
}

describe('private share links across instances on PostgreSQL', { skip: postgresOnly }, () => {
  it("a link revoked through instance B ends its stream on instance A at once; another link's stream goes on", async (t) => {
    const fresh = await testDatabase(t)
    // note: no periodic check could end the stream in this test: links are judged at each
    // change, and only the announcement of the revocation is one
    const a = await makeApp(t, { databaseUrl: fresh.url })
    const b = await makeApp(t, { databaseUrl: fresh.url })
    const base = await listen(a)
    const owner = await a.user()
    const s = await createStatus(a, owner, 'private-room', { value: 'BUSY' })
    const made = async () => {
      const res = await a.request(owner, 'POST', `/v1/status/${s.id}/share-links`, {})
      assert.equal(res.statusCode, 201, res.body)
      const { id, url } = res.json() as { id: string; url: string }
      return { id, token: url.slice(url.lastIndexOf('/') + 1) }
    }
    const doomed = await made()
    const kept = await made()
    const ending = await SseTestClient.connect(`${base}/v1/share-links/${doomed.token}/events`)
    const going = await SseTestClient.connect(`${base}/v1/share-links/${kept.token}/events`)
    t.after(() => going.close())
    for (const stream of [ending, going]) {
      assert.equal(stream.status, 200)
      assert.equal((await stream.nextEvent()).event, 'status')
    }

    const revoked = await b.request(owner, 'DELETE', `/v1/status/${s.id}/share-links/${doomed.id}`)
    assert.equal(revoked.statusCode, 204)
    const end = await ending.nextEvent()
    assert.equal(end.event, 'unavailable')
    assert.deepEqual(JSON.parse(end.data), { reason: 'linkEnded' })
    await ending.ended

    // the other link's stream is still live, and hears a write made through B
    assert.equal(
      (await b.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'FREE' })).statusCode,
      200,
    )
    const next = await going.nextEvent()
    assert.equal(next.event, 'status')
    assert.equal(JSON.parse(next.data).value, 'FREE')
    // and B refuses the revoked token as A does
    assert.equal((await b.request(null, 'GET', `/v1/share-links/${doomed.token}`)).statusCode, 404)
  })
})
