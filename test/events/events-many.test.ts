import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import type { AppDeps } from '../../src/app.ts'
import { encodeCursor, listTag, parseCursor } from '../../src/modules/events/many-statuses.ts'
import { signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { createStatus, grant, makeCast } from '../helpers/sharing.ts'
import { SseTestClient, waitUntil } from '../helpers/sse.ts'

// One stream for many statuses (docs/api.md#one-stream-for-many-statuses): GET /v1/events,
// over a real socket.

async function liveApp(ctx: Lifetime, deps: Omit<Partial<AppDeps>, 'database' | 'plans'> = {}) {
  const t: TestApp = await makeApp(ctx, { deps: { sse: { heartbeatMs: 50 }, ...deps } })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  const open: SseTestClient[] = []
  ctx.after(() => {
    for (const c of open) c.close()
  })
  const connect = async (path: string, headers: Record<string, string> = {}) => {
    const client = await SseTestClient.connect(`${base}${path}`, headers)
    open.push(client)
    return client
  }
  return { t, base, connect }
}

const manyUrl = (ids: readonly string[]) =>
  `/v1/events?${ids.map((id) => `status=${encodeURIComponent(id)}`).join('&')}`

type Ev = { event: string; id: string | undefined; data: string }
const parsed = (e: Ev) => ({ event: e.event, id: e.id, ...JSON.parse(e.data) })

describe('GET /v1/events: one stream for many statuses', () => {
  it('carries every status: current states in the order asked, then each write, each event naming its statusId', async (ctx) => {
    const { t, connect } = await liveApp(ctx)
    const { owner } = await makeCast(t)
    const a = await createStatus(t, owner, 'aaa', { value: 'FREE' })
    const b = await createStatus(t, owner, 'bbb', { value: 'BUSY' })
    const c = await createStatus(t, owner, 'ccc', { value: 'AWAY' })
    const stream = await connect(manyUrl([c.id, a.id, b.id]), { 'service-api-key': owner.key })
    assert.equal(stream.status, 200)
    assert.match(String(stream.response.headers['content-type']), /^text\/event-stream/)
    const first = [
      parsed(await stream.nextEvent()),
      parsed(await stream.nextEvent()),
      parsed(await stream.nextEvent()),
    ]
    assert.deepEqual(
      first.map((e) => [e.event, e.statusId, e.status.value, e.status.id]),
      [
        ['status', c.id, 'AWAY', c.id],
        ['status', a.id, 'FREE', a.id],
        ['status', b.id, 'BUSY', b.id],
      ],
    )
    assert.equal(first[1].status.statusKey, 'aaa', 'the Status as the per-status stream sends it')

    await t.request(owner, 'PATCH', `/v1/status/${b.id}`, { value: 'FREE' })
    const e = parsed(await stream.nextEvent())
    assert.deepEqual(
      [e.event, e.statusId, e.status.value, e.status.changeCount],
      ['status', b.id, 'FREE', 2],
    )
    // the id is the cursor of every status's version
    assert.equal(e.id, encodeCursor(listTag([c.id, a.id, b.id]), [1, 1, 2]))
  })

  it('Last-Event-ID resumes each status: only what changed since is sent', async (ctx) => {
    const { t, connect } = await liveApp(ctx)
    const { owner } = await makeCast(t)
    const a = await createStatus(t, owner, 'aaa', { value: 'FREE' })
    const b = await createStatus(t, owner, 'bbb', { value: 'BUSY' })
    const auth = { 'service-api-key': owner.key }
    const ids = [a.id, b.id]
    const first = await connect(manyUrl(ids), auth)
    await first.nextEvent()
    const last = await first.nextEvent()
    first.close()

    // while away: b changes twice, a not at all
    await t.request(owner, 'PATCH', `/v1/status/${b.id}`, { value: 'FREE' })
    await t.request(owner, 'PATCH', `/v1/status/${b.id}`, { value: 'OUT' })
    const back = await connect(manyUrl(ids), { ...auth, 'last-event-id': String(last.id) })
    const e = parsed(await back.nextEvent())
    assert.deepEqual([e.statusId, e.status.value], [b.id, 'OUT'], 'b: its current state')
    // a was up to date: a write to it is the next event, with nothing of a before it
    await t.request(owner, 'PATCH', `/v1/status/${a.id}`, { value: 'GONE' })
    const next = parsed(await back.nextEvent())
    assert.deepEqual([next.statusId, next.status.value], [a.id, 'GONE'])
    assert.equal(next.id, encodeCursor(listTag(ids), [2, 3]), 'the cursor keeps the resumed status')

    // a cursor of another list (or garbage) resumes nothing: every state afresh
    const other = await connect(manyUrl([b.id, a.id]), {
      ...auth,
      'last-event-id': String(last.id),
    })
    assert.deepEqual(
      [parsed(await other.nextEvent()).statusId, parsed(await other.nextEvent()).statusId],
      [b.id, a.id],
    )
  })

  it('a status hidden from the viewer is announced unavailable, the stream goes on, and it comes back without a reconnect', async (ctx) => {
    const { t, connect } = await liveApp(ctx)
    const { owner, subscriber } = await makeCast(t)
    const mine = await createStatus(t, subscriber, 'mine', { value: 'MINE' })
    const theirs = await createStatus(t, owner, 'theirs', { value: 'FREE', accessType: 'public' })
    const stream = await connect(manyUrl([mine.id, theirs.id]), {
      'service-api-key': subscriber.key,
    })
    await stream.nextEvent()
    await stream.nextEvent()

    await t.request(owner, 'PATCH', `/v1/status/${theirs.id}`, { accessType: 'private' })
    const hidden = parsed(await stream.nextEvent())
    assert.deepEqual(
      [hidden.event, hidden.statusId, hidden.reason],
      ['unavailable', theirs.id, 'notVisible'],
    )
    assert.equal(hidden.status, undefined, 'nothing of the hidden status')
    // hidden writes are not sent; the other status still is
    await t.request(owner, 'PATCH', `/v1/status/${theirs.id}`, { value: 'SECRET' })
    await t.request(subscriber, 'PATCH', `/v1/status/${mine.id}`, { value: 'STILL' })
    const still = parsed(await stream.nextEvent())
    assert.deepEqual([still.statusId, still.status.value], [mine.id, 'STILL'])

    await t.request(owner, 'PATCH', `/v1/status/${theirs.id}`, { accessType: 'public' })
    const back = parsed(await stream.nextEvent())
    assert.deepEqual(
      [back.event, back.statusId, back.status.value],
      ['status', theirs.id, 'SECRET'],
    )

    // a role given and taken: visibility changes at the same version, both ways
    const privateOne = await createStatus(t, owner, 'private-one', { value: 'P' })
    await grant(t, owner, privateOne.id, subscriber, 'subscriber')
    const roles = await connect(manyUrl([privateOne.id, mine.id]), {
      'service-api-key': subscriber.key,
    })
    assert.equal(parsed(await roles.nextEvent()).status.value, 'P')
    await roles.nextEvent()
    const revoked = await t.request(
      owner,
      'DELETE',
      `/v1/status/${privateOne.id}/users/${subscriber.id}`,
    )
    assert.equal(revoked.statusCode, 204)
    assert.equal(parsed(await roles.nextEvent()).reason, 'notVisible')
    await grant(t, owner, privateOne.id, subscriber, 'subscriber')
    const regranted = parsed(await roles.nextEvent())
    assert.deepEqual(
      [regranted.event, regranted.statusId, regranted.status.value],
      ['status', privateOne.id, 'P'],
    )
  })

  it('a deleted status is announced once; the stream carries the others on', async (ctx) => {
    const { t, connect } = await liveApp(ctx)
    const { owner } = await makeCast(t)
    const a = await createStatus(t, owner, 'aaa', { value: 'A' })
    const b = await createStatus(t, owner, 'bbb', { value: 'B' })
    const stream = await connect(manyUrl([a.id, b.id]), { 'service-api-key': owner.key })
    await stream.nextEvent()
    await stream.nextEvent()
    assert.equal((await t.request(owner, 'DELETE', `/v1/status/${a.id}`)).statusCode, 204)
    const gone = parsed(await stream.nextEvent())
    assert.deepEqual([gone.event, gone.statusId, gone.reason], ['unavailable', a.id, 'deleted'])
    await t.request(owner, 'PATCH', `/v1/status/${b.id}`, { value: 'B2' })
    const next = parsed(await stream.nextEvent())
    assert.deepEqual([next.statusId, next.status.value], [b.id, 'B2'])
  })

  it('heartbeats keep it alive, and with a session cookie it works as with a key', async (ctx) => {
    const { t, connect } = await liveApp(ctx, { signup: 'open' })
    const { id, cookie } = await signUpUser(t)
    const other = await t.user()
    const pub = await createStatus(t, other, 'pub', { value: 'OPEN', accessType: 'public' })
    const stream = await connect(manyUrl([pub.id]), { cookie: `statusd_session=${cookie}` })
    assert.equal(stream.status, 200)
    const e = parsed(await stream.nextEvent())
    assert.deepEqual([e.statusId, e.status.value, e.status.statusKey], [pub.id, 'OPEN', null])
    assert.equal((await stream.nextComment()).text, 'ping')
    assert.ok(id)
  })

  it('counts once against STREAMS_PER_CLIENT, however many statuses it carries', async (ctx) => {
    const { t, connect } = await liveApp(ctx, { streamsPerClient: 2 })
    const owner = await t.user()
    const ids: string[] = []
    for (let i = 0; i < 5; i++)
      ids.push((await createStatus(t, owner, `status-${i}`, { value: 'X' })).id)
    const auth = { 'service-api-key': owner.key }
    const one = await connect(manyUrl(ids), auth)
    const two = await connect(manyUrl(ids), auth)
    assert.deepEqual([one.status, two.status], [200, 200])
    const three = await connect(manyUrl(ids.slice(0, 1)), auth)
    assert.equal(three.status, 429)
    assert.equal(JSON.parse(await three.text()).errorCode, 'tooManyStreams')
    one.close()
    await waitUntil(
      async () => (await connect(manyUrl(ids), auth)).status === 200,
      'a place is free again',
    )
  })

  it('refuses, before any stream opens: a status the caller may not see (each named), none, too many, one twice, no credential', async (ctx) => {
    const { t, connect } = await liveApp(ctx)
    const { owner, stranger } = await makeCast(t)
    const mine = await createStatus(t, owner, 'mine', { value: 'X' })
    const hidden = await createStatus(t, stranger, 'hidden', { value: 'Y' })
    const auth = { 'service-api-key': owner.key }
    const check = async (
      path: string,
      headers: Record<string, string>,
      status: number,
      code: string,
    ) => {
      const c = await connect(path, headers)
      assert.equal(c.status, status, path)
      assert.match(String(c.response.headers['content-type']), /^application\/json/)
      const body = JSON.parse(await c.text())
      assert.equal(body.errorCode, code)
      return body
    }
    const body = await check(manyUrl([mine.id, hidden.id, 'nope']), auth, 404, 'notFound')
    assert.deepEqual(
      body.errors.map((e: { field: string }) => e.field),
      ['status.1', 'status.2'],
      'every status it may not see, by position; a private one is the same as none',
    )
    await check('/v1/events', auth, 400, 'validationError')
    await check(
      manyUrl(Array.from({ length: 101 }, (_, i) => `id${i}`)),
      auth,
      400,
      'validationError',
    )
    await check(manyUrl([mine.id, mine.id]), auth, 400, 'validationError')
    await check(manyUrl([mine.id]), {}, 401, 'unauthorized')
    // a confined key sees only its statuses
    const confined = await t.request(owner, 'POST', '/v1/user/api-keys', {
      scopes: ['status:read'],
      statusIds: [mine.id],
    })
    const other = await createStatus(t, owner, 'other', { value: 'Z' })
    await check(
      manyUrl([mine.id, other.id]),
      { 'service-api-key': confined.json().key },
      404,
      'notFound',
    )
    // a key without status:read may not open it
    const noRead = await t.request(owner, 'POST', '/v1/user/api-keys', { scopes: ['status:value'] })
    await check(
      manyUrl([mine.id]),
      { 'service-api-key': noRead.json().key },
      403,
      'insufficientScope',
    )
  })

  it('the cursor: parsed back for its own list only', () => {
    const ids = ['a', 'b', 'c']
    const tag = listTag(ids)
    assert.deepEqual(parseCursor(encodeCursor(tag, [5, -1, 40]), ids), [5, null, 40])
    assert.deepEqual(parseCursor(encodeCursor(tag, [5, -1, 40]), ['a', 'c', 'b']), [
      null,
      null,
      null,
    ])
    assert.deepEqual(parseCursor(`${tag}.5.x!.1`, ids), [null, null, null])
    assert.deepEqual(parseCursor(`${tag}.5`, ids), [null, null, null])
    assert.deepEqual(parseCursor('7', ids), [null, null, null])
    assert.deepEqual(parseCursor(undefined, ids), [null, null, null])
  })
})
