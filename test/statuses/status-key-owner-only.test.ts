import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { createStatus, grant, makeCast } from '../helpers/sharing.ts'
import { SseTestClient } from '../helpers/sse.ts'

// Issue 19 (hardening II), finding 9: the owner's `statusKey` is the owner's own name for the
// status; everyone else reads it as null (docs/api.md#the-status-object), on every path that
// hands a non-owner a status: by id, a write's answer, subscriptions, live events.

async function world(ctx: Lifetime) {
  const t = await makeApp(ctx)
  const cast = await makeCast(t)
  const pub = await createStatus(t, cast.owner, 'secret-room-key', {
    value: 'ON',
    accessType: 'public',
  })
  const priv = await createStatus(t, cast.owner, 'private-desk-key', { value: 'OFF' })
  await grant(t, cast.owner, priv.id, cast.updater, 'updater')
  await grant(t, cast.owner, priv.id, cast.subscriber, 'subscriber')
  return { t, ...cast, pub, priv }
}

describe("finding 9: the owner's statusKey shown to other users", () => {
  it('GET /v1/status/:statusId: the owner reads the key, a stranger (public), an updater and a subscriber read null', async (ctx) => {
    const { t, owner, updater, subscriber, stranger, pub, priv } = await world(ctx)
    const read = async (as: typeof owner, id: string) => {
      const res = await t.request(as, 'GET', `/v1/status/${id}`)
      assert.equal(res.statusCode, 200, res.body)
      return res.json().statusKey
    }
    assert.equal(await read(owner, pub.id), 'secret-room-key')
    assert.equal(await read(owner, priv.id), 'private-desk-key')
    assert.equal(await read(stranger, pub.id), null)
    assert.equal(await read(updater, priv.id), null)
    assert.equal(await read(subscriber, priv.id), null)
    assert.equal(await read(updater, pub.id), null)
  })

  it("an updater's write is answered without the key; the owner's with it", async (ctx) => {
    const { t, owner, updater, priv } = await world(ctx)
    const theirs = await t.request(updater, 'PATCH', `/v1/status/${priv.id}`, { value: 'BUSY' })
    assert.equal(theirs.statusCode, 200, theirs.body)
    assert.equal(theirs.json().statusKey, null)
    assert.equal(theirs.json().value, 'BUSY')
    const replayed = await t.request(
      updater,
      'PATCH',
      `/v1/status/${priv.id}`,
      { value: 'BUSY' },
      { 'idempotency-key': 'finding-9-replay' },
    )
    assert.equal(replayed.json().statusKey, null)
    const again = await t.request(
      updater,
      'PATCH',
      `/v1/status/${priv.id}`,
      { value: 'BUSY' },
      { 'idempotency-key': 'finding-9-replay' },
    )
    assert.equal(again.json().statusKey, null, 'a replayed answer too')
    const mine = await t.request(owner, 'PATCH', `/v1/status/${priv.id}`, { value: 'FREE' })
    assert.equal(mine.json().statusKey, 'private-desk-key')
  })

  it('subscriptions (the list, and subscribing to a public status) hold null for the key', async (ctx) => {
    const { t, updater, subscriber, stranger, pub } = await world(ctx)
    for (const who of [updater, subscriber]) {
      const list = await t.request(who, 'GET', '/v1/user/subscriptions')
      assert.equal(list.statusCode, 200, list.body)
      assert.ok(list.json().length > 0)
      for (const entry of list.json()) assert.equal(entry.statusKey, null, list.body)
    }
    const subscribed = await t.request(stranger, 'POST', `/v1/status/${pub.id}/subscription`)
    assert.ok(subscribed.statusCode === 201 || subscribed.statusCode === 200, subscribed.body)
    assert.equal(subscribed.json().statusKey, null)
    const list = await t.request(stranger, 'GET', '/v1/user/subscriptions')
    assert.deepEqual(
      list.json().map((e: { statusKey: unknown }) => e.statusKey),
      [null],
    )
  })

  it('live events: the owner is sent the key, the updater, subscriber and a stranger (public) null', async (ctx) => {
    const { t, owner, updater, subscriber, stranger, pub, priv } = await world(ctx)
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const watchers = [
      [owner, priv.id, 'private-desk-key'],
      [updater, priv.id, null],
      [subscriber, priv.id, null],
      [owner, pub.id, 'secret-room-key'],
      [stranger, pub.id, null],
    ] as const
    const clients: SseTestClient[] = []
    try {
      for (const [who, id] of watchers)
        clients.push(
          await SseTestClient.connect(`${base}/v1/status/${id}/events`, {
            'service-api-key': who.key,
          }),
        )
      // the first event (current state), then one after a write, for every viewer at once
      for (const [i, [, , key]] of watchers.entries()) {
        const first = await (clients[i] as SseTestClient).nextEvent()
        assert.equal(JSON.parse(first.data).statusKey, key, `first event of watcher ${i}`)
      }
      await t.request(owner, 'PATCH', `/v1/status/${priv.id}`, { value: 'NEXT' })
      await t.request(owner, 'PATCH', `/v1/status/${pub.id}`, { value: 'NEXT' })
      for (const [i, [, , key]] of watchers.entries()) {
        const next = await (clients[i] as SseTestClient).nextEvent()
        assert.equal(JSON.parse(next.data).value, 'NEXT')
        assert.equal(JSON.parse(next.data).statusKey, key, `update event of watcher ${i}`)
      }
    } finally {
      for (const client of clients) client.close()
    }
  })
})
