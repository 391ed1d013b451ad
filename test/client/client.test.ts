import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { before, describe, it } from 'node:test'
import {
  type Status,
  StatusdClient,
  StatusdError,
  type WatchEvent,
} from '../../packages/client/src/index.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { tcpProxy } from '../helpers/tcp-proxy.ts'

// The typed library, packages/client (docs/client.md), against a real statusd on loopback:
// each method, its typed errors, safe retries, and watch() across dropped connections. One
// server for the file; each test has its own user, so tests share nothing else.

let t: TestApp
let base: string
const suite = suiteLifetime()
before(async () => {
  // note: a short reconnection delay (the `retry:` field the client follows), no heartbeats
  t = await makeApp(suite, { deps: { sse: { retryMs: 20, heartbeatMs: 60_000 } } })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
})

const clientOf = (
  user: TestUser | null,
  options: Partial<ConstructorParameters<typeof StatusdClient>[0]> = {},
) => new StatusdClient({ url: base, ...(user && { apiKey: user.key }), ...options })

/** Rejects unless `promise` rejects with a StatusdError; resolves with it. */
async function refusal(promise: Promise<unknown>): Promise<StatusdError> {
  try {
    await promise
  } catch (err) {
    assert.ok(err instanceof StatusdError, `a StatusdError, not ${String(err)}`)
    return err
  }
  assert.fail('resolved, expected a StatusdError')
}

describe('StatusdClient: each method against a real server (docs/client.md#methods)', () => {
  it('set creates by key, then updates; get, getByKey, list and listPage read it back', async () => {
    const owner = await t.user()
    const client = clientOf(owner)
    const created = await client.set('room-4', { value: 'FREE', colorNo: 3 })
    assert.deepEqual(
      [created.statusKey, created.name, created.value, created.changeCount],
      ['room-4', 'room-4', 'FREE', 1],
    )
    const updated = await client.set('room-4', { value: 'OCCUPIED' })
    assert.deepEqual(
      [updated.id, updated.value, updated.colorNo, updated.changeCount],
      [created.id, 'OCCUPIED', 3, 2],
    )
    assert.deepEqual(await client.get(created.id), updated)
    assert.deepEqual(await client.getByKey('room-4'), updated)
    const second = await client.set('room-5', { value: 'FREE' })
    assert.deepEqual(await client.list(), [
      { statusId: created.id, statusKey: 'room-4', shareId: created.shareId, name: 'room-4' },
      { statusId: second.id, statusKey: 'room-5', shareId: second.shareId, name: 'room-5' },
    ])
    const first = await client.listPage({ limit: 1 })
    assert.deepEqual(
      first.items.map((s) => s.statusId),
      [created.id],
    )
    assert.ok(first.nextCursor)
    const last = await client.listPage({ limit: 1, cursor: first.nextCursor })
    assert.deepEqual([last.items.map((s) => s.statusId), last.nextCursor], [[second.id], null])
  })

  it('listStatuses gives your statuses with their values (list entries have none); getMany reads many by id', async () => {
    const owner = await t.user()
    const client = clientOf(owner)
    const room = await client.set('room-4', { value: 'FREE' })
    const lamp = await client.set('lamp-x', { value: 'ON', colorNo: 2 })
    const build = await client.set('build', { value: 'PASSING' })
    await client.delete(build.id)
    const updated = await client.set('room-4', { value: 'OCCUPIED' })
    const listed = await client.listStatuses()
    assert.deepEqual(
      listed.map((s) => [s.statusKey, s.value]),
      [
        ['room-4', 'OCCUPIED'],
        ['lamp-x', 'ON'],
      ],
    )
    assert.deepEqual(listed[0], updated)
    assert.deepEqual(await client.getMany([lamp.id, room.id]), [lamp, updated])
    const unknown = await refusal(client.getMany([room.id, 'nosuchstatus000000000']))
    assert.equal(unknown.status, 404)
    assert.deepEqual(
      unknown.errors.map((e) => e.field),
      ['status.1'],
    )
    assert.deepEqual(await client.getMany([]), [])
  })

  it('upsert is set, and tells whether the write created the status', async () => {
    const client = clientOf(await t.user())
    const first = await client.upsert('room-4', { value: 'FREE' })
    assert.deepEqual([first.created, first.status.value], [true, 'FREE'])
    const second = await client.upsert('room-4', { value: 'BUSY' })
    assert.deepEqual(
      [second.created, second.status.id, second.status.changeCount],
      [false, first.status.id, 2],
    )
  })

  it('create makes a new key only; update PATCHes by id; history lists the values, newest first', async () => {
    const owner = await t.user()
    const client = clientOf(owner)
    const status = await client.create('build-main', { name: 'Build main', value: 'PASSING' })
    assert.equal(status.name, 'Build main')
    const again = await refusal(client.create('build-main', { value: 'FAILING' }))
    assert.deepEqual([again.status, again.errorCode], [412, 'preconditionFailed'])
    const patched = await client.update(status.id, { value: 'FAILING', description: 'flaky test' })
    assert.deepEqual(
      [patched.value, patched.description, patched.changeCount],
      ['FAILING', 'flaky test', 2],
    )
    const history = await client.history(status.id)
    assert.deepEqual(
      history.items.map((e) => e.value),
      ['FAILING', 'PASSING'],
    )
    assert.equal(history.nextCursor, null)
    const paged = await client.history(status.id, { limit: 1 })
    assert.deepEqual(
      paged.items.map((e) => e.value),
      ['FAILING'],
    )
    assert.ok(paged.nextCursor)
  })

  it('durations sums the time in each value; Dates and text both name the range', async () => {
    const client = clientOf(await t.user())
    const status = await client.set('door-2', { value: 'OPEN' })
    await client.update(status.id, { value: 'SHUT' })
    const week = await client.durations(status.id, { from: new Date(Date.now() - 7 * 86_400_000) })
    assert.deepEqual(week.values.map((v) => v.value).sort(), ['OPEN', 'SHUT'])
    const none = await client.durations(status.id, {
      from: '2020-01-01T00:00:00Z',
      to: new Date('2020-01-02T00:00:00Z'),
    })
    assert.deepEqual([none.trackedSeconds, none.values], [0, []])
    const wrong = await refusal(client.durations(status.id, { from: 'yesterday' }))
    assert.deepEqual([wrong.status, wrong.errorCode], [400, 'validationError'])
  })

  it('transfer offers a status to another user, who accepts it; withdrawTransfer takes it back', async () => {
    const owner = await t.user()
    const colleague = await t.user()
    const client = clientOf(owner)
    const status = await client.set('desk-7', { value: 'IN' })
    const offer = await client.transfer(status.id, colleague.id)
    assert.equal(offer.role, 'owner')
    await client.withdrawTransfer(status.id)
    const gone = await refusal(client.withdrawTransfer(status.id))
    assert.deepEqual([gone.status, gone.errorCode], [404, 'notFound'])
    const again = await client.transfer(status.id, colleague.id)
    const accepted = await t.request(colleague, 'POST', `/v1/user/invitations/${again.id}/accept`)
    assert.equal(accepted.statusCode, 200, accepted.body)
    assert.equal((await clientOf(colleague).get(status.id)).value, 'IN')
    const notMine = await refusal(client.transfer(status.id, colleague.id))
    assert.equal(notMine.status, 403)
  })

  it('update honours ifMatch: a stale ETag is 412 and changes nothing', async () => {
    const owner = await t.user()
    const client = clientOf(owner)
    const status = await client.set('lamp', { value: 'ON' })
    const etag = (await t.request(owner, 'GET', `/v1/status/${status.id}`)).headers.etag as string
    await client.update(status.id, { value: 'OFF' }, { ifMatch: etag })
    const stale = await refusal(client.update(status.id, { value: 'ON' }, { ifMatch: etag }))
    assert.deepEqual([stale.status, stale.errorCode], [412, 'preconditionFailed'])
    assert.equal((await client.get(status.id)).value, 'OFF')
  })

  it('shared reads a public status by share id with no API key', async () => {
    const owner = await t.user()
    const status = await clientOf(owner).set('door', { value: 'OPEN', accessType: 'public' })
    const view = await clientOf(null).shared(status.shareId)
    assert.deepEqual([view.shareId, view.name, view.value], [status.shareId, 'door', 'OPEN'])
  })

  it('delete and deleteByKey remove a status; reading it then is 404 notFound', async () => {
    const owner = await t.user()
    const client = clientOf(owner)
    const one = await client.set('one', { value: 'X' })
    await client.set('two', { value: 'Y' })
    await client.delete(one.id)
    await client.deleteByKey('two')
    assert.deepEqual(await client.list(), [])
    const gone = await refusal(client.get(one.id))
    assert.deepEqual([gone.status, gone.errorCode], [404, 'notFound'])
  })

  it('checkAuth says who the key is; listApiKeys and revokeApiKey manage keys', async () => {
    const owner = await t.user({ name: 'Ada' })
    const client = clientOf(owner)
    const me = await client.checkAuth()
    assert.deepEqual(
      [me.userId, me.name, me.authLevel, me.credential.kind],
      [owner.id, 'Ada', 'verified', 'key'],
    )
    const spare = await createApiKey(t.database.db, owner.id, { label: 'spare' })
    assert.deepEqual(
      (await client.listApiKeys()).map((k) => k.id).sort(),
      [me.credential.id, spare.id].sort(),
    )
    await client.revokeApiKey(spare.id)
    const refused = await refusal(clientOf({ id: owner.id, key: spare.key }).checkAuth())
    assert.deepEqual([refused.status, refused.errorCode], [401, 'unauthorized'])
  })
})

describe('StatusdClient: values that end (docs/client.md#values-that-end)', () => {
  const MINUTE = 60_000

  it('valueUntil as a duration counts from the write; the Status shows it and valueAfter', async () => {
    const client = clientOf(await t.user())
    const sent = Date.now()
    const s = await client.set('room-4', { value: 'BUSY', valueUntil: 'PT45M', valueAfter: 'FREE' })
    const answered = Date.now()
    assert.equal(s.valueAfter, 'FREE')
    // counted from the write, between sending and the answer
    const until = Date.parse(s.valueUntil ?? '')
    assert.ok(sent + 45 * MINUTE <= until && until <= answered + 45 * MINUTE, s.valueUntil ?? '')
    assert.deepEqual(await client.get(s.id), s)
  })

  it('valueUntil as a Date is sent as its instant; valueAfter defaults to the value before', async () => {
    const client = clientOf(await t.user())
    const before = await client.set('room-4', { value: 'FREE' })
    const at = new Date(Date.now() + 2 * 24 * 60 * MINUTE)
    const s = await client.update(before.id, { value: 'AWAY', valueUntil: at })
    assert.deepEqual([Date.parse(s.valueUntil ?? ''), s.valueAfter], [at.getTime(), 'FREE'])
  })

  it('a later value without valueUntil, or valueUntil null, cancels the pending end', async () => {
    const client = clientOf(await t.user())
    const s = await client.set('room-4', { value: 'BUSY', valueUntil: 'PT1H', valueAfter: 'FREE' })
    const later = await client.update(s.id, { value: 'OUT' })
    assert.deepEqual([later.valueUntil, later.valueAfter], [null, null])
    await client.update(s.id, { value: 'BUSY', valueUntil: 'PT1H' })
    const cancelled = await client.update(s.id, { valueUntil: null })
    assert.deepEqual([cancelled.value, cancelled.valueUntil], ['BUSY', null])
  })

  it('an end out of bounds is a validationError naming valueUntil, and changes nothing', async () => {
    const client = clientOf(await t.user())
    const s = await client.set('room-4', { value: 'FREE' })
    for (const valueUntil of ['PT30S', 'P367D', new Date(Date.now() - MINUTE)]) {
      const error = await refusal(client.update(s.id, { value: 'BUSY', valueUntil }))
      assert.equal(error.errorCode, 'validationError')
      assert.deepEqual(
        error.errors.map((e) => e.field),
        ['valueUntil'],
      )
    }
    assert.deepEqual(await client.get(s.id), s)
  })
})

describe('StatusdClient: errors are typed (docs/client.md#errors)', () => {
  it('a refusal is a StatusdError with status, errorCode, message, errors and requestId', async () => {
    const owner = await t.user()
    const client = clientOf(owner)
    const invalid = await refusal(client.set('room-4', { value: 'MUCH TOO LONG' }))
    assert.equal(invalid.status, 400)
    assert.equal(invalid.errorCode, 'validationError')
    assert.equal(invalid.name, 'StatusdError')
    assert.ok(invalid.message.length > 0)
    assert.deepEqual(
      invalid.errors.map((e) => e.field),
      ['value'],
    )
    assert.match(invalid.requestId ?? '', /^[0-9a-f-]{36}$/)
    assert.deepEqual(await client.list(), [], 'the refused write changed nothing')
    const badKey = await refusal(clientOf({ id: owner.id, key: 'sdk_not-a-key' }).list())
    assert.deepEqual([badKey.status, badKey.errorCode], [401, 'unauthorized'])
    const missing = await refusal(client.getByKey('nothing-here'))
    assert.deepEqual([missing.status, missing.errorCode], [404, 'notFound'])
  })

  it('an answer that is not statusd JSON (a proxy page) is a StatusdError with errorCode null', async (ctx) => {
    const owner = await t.user()
    const proxy = await tcpProxy(ctx, portOf(base))
    const page = '<html>Bad gateway</html>'
    proxy.answerNext(
      `HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\ncontent-length: ${page.length}\r\nconnection: close\r\n\r\n${page}`,
    )
    const error = await refusal(clientOf(owner, { url: proxy.base, retries: 0 }).list())
    assert.deepEqual(
      [error.status, error.errorCode, error.message, error.requestId],
      [502, null, 'HTTP 502', null],
    )
  })
})

const portOf = (url: string) => ({ host: '127.0.0.1', port: Number(new URL(url).port) })

describe('StatusdClient: retries are safe (docs/client.md#retries)', () => {
  it('a write whose answer is lost is tried again with the same Idempotency-Key: one change', async (ctx) => {
    const owner = await t.user()
    const proxy = await tcpProxy(ctx, portOf(base))
    const client = clientOf(owner, { url: proxy.base, retryDelayMs: 1 })
    const created = await client.set('room-4', { value: 'FREE' })
    proxy.dropNextResponse()
    const updated = await client.set('room-4', { value: 'FREE' })
    // the server did the first try; the second got its answer replayed, not a second update
    assert.equal(updated.changeCount, 2)
    assert.equal((await client.get(created.id)).changeCount, 2)
    assert.deepEqual(
      (await client.history(created.id)).items.map((e) => e.value),
      ['FREE', 'FREE'],
    )
    proxy.dropNextResponse()
    const patched = await client.update(created.id, { value: 'BUSY' })
    assert.equal(patched.changeCount, 3)
    assert.equal((await client.get(created.id)).changeCount, 3)
  })

  it('an Idempotency-Key is a UUID; the waits are at most maxRetryDelayMs, a longer Retry-After too', async (ctx) => {
    const owner = await t.user()
    const proxy = await tcpProxy(ctx, portOf(base))
    const waits: number[] = []
    const keys: (string | null)[] = []
    const client = clientOf(owner, {
      url: proxy.base,
      fetch: (input, init) => {
        if (init?.method === 'POST') keys.push(new Headers(init.headers).get('idempotency-key'))
        return fetch(input, init)
      },
      retryDelayMs: 60_000,
      maxRetryDelayMs: 5_000,
      sleep: async (ms) => {
        waits.push(ms)
      },
    })
    const body = JSON.stringify({ message: 'Busy', errorCode: 'unavailable', requestId: 'r' })
    proxy.answerNext(
      `HTTP/1.1 503 Service Unavailable\r\nretry-after: 120\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
    )
    proxy.dropNextResponse()
    const status = await client.set('room-4', { value: 'FREE' })
    assert.equal(status.changeCount, 1)
    assert.deepEqual(
      waits,
      [5_000, 5_000],
      'Retry-After: 120, then the doubled delay: both bounded',
    )
    const history = await client.history(status.id)
    assert.equal(history.items.length, 1, 'the write was made once')
    assert.equal(keys.length, 3)
    assert.equal(new Set(keys).size, 1, 'one key on every try')
    assert.match(
      keys[0] ?? '',
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    )
  })

  it('a delete whose answer is lost is done, not a 404', async (ctx) => {
    const owner = await t.user()
    const proxy = await tcpProxy(ctx, portOf(base))
    const client = clientOf(owner, { url: proxy.base, retryDelayMs: 1 })
    const status = await client.set('gone', { value: 'X' })
    proxy.dropNextResponse()
    await client.delete(status.id)
    assert.deepEqual(await client.list(), [])
  })

  it('429 and 503 are tried again after Retry-After, not the client’s own delay', async (ctx) => {
    const owner = await t.user()
    const proxy = await tcpProxy(ctx, portOf(base))
    // a minute of backoff would outlast the test: only Retry-After: 0 lets it finish
    const client = clientOf(owner, { url: proxy.base, retryDelayMs: 60_000 })
    const refusal = (code: number, reason: string, errorCode: string) => {
      const body = JSON.stringify({ message: reason, errorCode, requestId: 'r' })
      return `HTTP/1.1 ${code} ${reason}\r\nretry-after: 0\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`
    }
    proxy.answerNext(refusal(429, 'Too Many Requests', 'rateLimited'))
    proxy.answerNext(refusal(503, 'Service Unavailable', 'unavailable'))
    const status = await client.set('room-4', { value: 'FREE' })
    assert.equal(status.changeCount, 1)
    assert.equal(proxy.unanswered, 0, 'the 429 and the 503 were both answered, then the write done')
    proxy.answerNext(refusal(503, 'Service Unavailable', 'unavailable'))
    proxy.answerNext(refusal(503, 'Service Unavailable', 'unavailable'))
    proxy.answerNext(refusal(503, 'Service Unavailable', 'unavailable'))
    const error = await (async () => {
      try {
        await client.get(status.id)
      } catch (err) {
        return err as StatusdError
      }
    })()
    assert.deepEqual(
      [error?.status, error?.errorCode, error?.retryAfter],
      [503, 'unavailable', 0],
      'gives up after `retries` (2) more tries',
    )
  })
})

describe('StatusdClient.watch (docs/client.md#watch)', () => {
  /** The next event, or fails when the iteration ended. */
  async function next(events: AsyncGenerator<WatchEvent>): Promise<WatchEvent> {
    const { done, value } = await events.next()
    assert.ok(!done, 'the watch ended')
    return value
  }
  const valueIn = (event: WatchEvent) =>
    event.type === 'status' ? event.status.value : event.reason

  it('resumes across dropped connections with Last-Event-ID: no change missed, none twice', async (ctx) => {
    const owner = await t.user()
    const proxy = await tcpProxy(ctx, portOf(base))
    const client = clientOf(owner, { url: proxy.base })
    const direct = clientOf(owner)
    const status = await direct.set('room-4', { value: 'FREE' })
    const abort = new AbortController()
    ctx.after(() => abort.abort())
    const events = client.watch('room-4', { signal: abort.signal })
    const seen: Status[] = []
    const ids: number[] = []
    const take = async () => {
      const event = await next(events)
      assert.equal(event.type, 'status')
      if (event.type === 'status') {
        seen.push(event.status)
        ids.push(event.id)
      }
    }
    await take() // the current state
    await direct.set('room-4', { value: 'BUSY' })
    await take()
    // dropped while a change happens: the new connection waits until it is made
    proxy.hold()
    const before = proxy.connections
    proxy.cut()
    await direct.set('room-4', { value: 'AWAY' })
    proxy.release()
    await take()
    assert.ok(proxy.connections > before, 'the stream was opened again')
    // dropped while nothing changes: nothing is sent again on the new connection
    proxy.hold()
    proxy.cut()
    proxy.release()
    await direct.update(status.id, { value: 'FREE' })
    await take()
    assert.deepEqual(
      seen.map((s) => s.value),
      ['FREE', 'BUSY', 'AWAY', 'FREE'],
    )
    assert.deepEqual(
      seen.map((s) => s.changeCount),
      [1, 2, 3, 4],
    )
    assert.ok(
      ids.every((id, i) => i === 0 || id > (ids[i - 1] as number)),
      `ids grow: ${ids}`,
    )
    abort.abort()
    assert.deepEqual(await events.next(), { done: true, value: undefined }, 'abort ends the watch')
  })

  it('onReconnect says why and how long before each reconnection; retries: Infinity never gives up', async (ctx) => {
    const owner = await t.user()
    const proxy = await tcpProxy(ctx, portOf(base))
    const direct = clientOf(owner)
    await direct.set('room-4', { value: 'FREE' })
    const abort = new AbortController()
    ctx.after(() => abort.abort())
    const reconnects: { error: unknown; delayMs: number }[] = []
    const refused = JSON.stringify({ message: 'Busy', errorCode: 'unavailable', requestId: 'r' })
    const events = clientOf(owner, { url: proxy.base, retries: 0 }).watch('room-4', {
      signal: abort.signal,
      retries: Number.POSITIVE_INFINITY,
      onReconnect: (info) => {
        reconnects.push(info)
        // the next two openings are refused: more than the client's `retries` (0)
        if (reconnects.length === 1)
          for (let i = 0; i < 2; i++)
            proxy.answerNext(
              `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${refused.length}\r\nconnection: close\r\n\r\n${refused}`,
            )
      },
    })
    assert.equal(valueIn(await next(events)), 'FREE')
    proxy.cut()
    await direct.set('room-4', { value: 'BUSY' })
    assert.equal(valueIn(await next(events)), 'BUSY')
    assert.equal(reconnects.length, 3)
    const [cut, busy, again] = reconnects
    assert.ok(cut?.error instanceof Error && !(cut.error instanceof StatusdError), 'a cut')
    assert.ok(busy?.error instanceof StatusdError && busy.error.status === 503)
    assert.ok(again?.error instanceof StatusdError)
    // the server's retry: (20 ms here), doubling with each failure in a row
    assert.deepEqual(
      reconnects.map((r) => r.delayMs),
      [20, 20, 40],
    )
  })

  it('watchShared follows a public status with no API key, until it is made private', async () => {
    const owner = await t.user()
    const status = await clientOf(owner).set('door', { value: 'OPEN', accessType: 'public' })
    const events = clientOf(null).watchShared(status.shareId)
    const first = await events.next()
    assert.ok(!first.done && first.value.type === 'status')
    assert.deepEqual(
      [first.value.status.shareId, first.value.status.value],
      [status.shareId, 'OPEN'],
    )
    await clientOf(owner).set('door', { value: 'SHUT' })
    const second = await events.next()
    assert.ok(!second.done && second.value.type === 'status')
    assert.equal(second.value.status.value, 'SHUT')
    await clientOf(owner).update(status.id, { accessType: 'private' })
    assert.deepEqual(await events.next(), {
      done: false,
      value: { type: 'unavailable', reason: 'notVisible' },
    })
    assert.deepEqual(await events.next(), { done: true, value: undefined })
  })

  it('by id too; a deleted status ends the watch with unavailable', async () => {
    const owner = await t.user()
    const client = clientOf(owner)
    const status = await client.set('lamp', { value: 'ON' })
    const events = client.watch(status.id)
    assert.equal(valueIn(await next(events)), 'ON')
    await client.delete(status.id)
    assert.deepEqual(await next(events), { type: 'unavailable', reason: 'deleted' })
    assert.deepEqual(await events.next(), { done: true, value: undefined })
    const unknown = await refusal(client.watch('no-such-status').next())
    assert.deepEqual([unknown.status, unknown.errorCode], [404, 'notFound'])
  })
})
