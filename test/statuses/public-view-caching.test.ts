import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { before, describe, it } from 'node:test'
import { InProcessEventBus } from '../../src/lib/event-bus.ts'
import { RENDER_CACHE_MAX_AGE_MS } from '../../src/modules/events/live-updates.plugin.ts'
import { STATUS_CHANGES } from '../../src/modules/statuses/status-events.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { testClock } from '../helpers/clock.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { createStatus, makeCast } from '../helpers/sharing.ts'
import { waitUntil } from '../helpers/sse.ts'

// docs/sharing.md#caching-of-public-views: the badge, the share view (JSON) and the share page
// carry a strong ETag, answer 304 to it, say `public, no-cache`, and are served from a render
// cache that forgets a status as soon as it changes.

const clock = testClock()
let t: TestApp
let owner: TestUser
let stranger: TestUser
const suite = suiteLifetime()
before(async () => {
  // note: an in-process bus on both engines, so that what a test writes is heard before it
  // reads; instances hearing each other through PostgreSQL are the last test's
  const events = new InProcessEventBus(STATUS_CHANGES)
  suite.after(() => events.close())
  t = await makeApp(suite, { deps: { clock, events, anonRequestsPerMinute: 1_000_000 } })
  ;({ owner, stranger } = await makeCast(t))
})

const anonymous = (url: string, headers: Record<string, string> = {}) =>
  t.request(null, 'GET', url, undefined, headers)

let made = 0
/** A public status of its own for each test, history and people public (the page shows them). */
async function publicStatus(value = 'FREE') {
  made += 1
  return createStatus(t, owner, `room-${made}`, {
    name: `Room ${made}`,
    value,
    accessType: 'public',
    accessTypeHistory: 'public',
    accessTypeUserList: 'public',
  })
}

const VIEWS = [
  { view: 'the badge', path: (shareId: string) => `/s/${shareId}/badge.svg` },
  { view: 'the share view (JSON)', path: (shareId: string) => `/v1/share/${shareId}` },
  { view: 'the share page', path: (shareId: string) => `/s/${shareId}` },
] as const

for (const { view, path } of VIEWS)
  describe(`${view}: ETag, 304 and the render cache`, () => {
    it('answers 200 with a strong ETag and Cache-Control: public, no-cache', async () => {
      const s = await publicStatus()
      const res = await anonymous(path(s.shareId))
      assert.equal(res.statusCode, 200)
      assert.match(String(res.headers.etag), new RegExp(`^"${s.shareId}\\.\\d+-[\\w-]+"$`))
      assert.equal(res.headers['cache-control'], 'public, no-cache')
      // served again from the render cache: the same bytes, the same tag
      const again = await anonymous(path(s.shareId))
      assert.equal(again.body, res.body)
      assert.equal(again.headers.etag, res.headers.etag)
    })

    it('If-None-Match with the current ETag is 304 with the ETag and no body; HEAD too', async () => {
      const s = await publicStatus()
      const { etag } = (await anonymous(path(s.shareId))).headers
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await t.request(null, method, path(s.shareId), undefined, {
          'if-none-match': String(etag),
        })
        assert.equal(res.statusCode, 304, method)
        assert.equal(res.body, '')
        assert.equal(res.headers.etag, etag)
      }
    })

    it('a change made through the API shows in the very next read: 200, a new ETag', async () => {
      const s = await publicStatus()
      const before = await anonymous(path(s.shareId))
      const patched = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'OCCUPIED' })
      assert.equal(patched.statusCode, 200)
      const after = await anonymous(path(s.shareId), {
        'if-none-match': String(before.headers.etag),
      })
      assert.equal(after.statusCode, 200, 'the old ETag misses')
      assert.notEqual(after.headers.etag, before.headers.etag)
      assert.match(after.body, /OCCUPIED/)
    })

    it('a status made private is 404 at once, never cacheable (no ETag, no-cache)', async () => {
      const s = await publicStatus()
      const before = await anonymous(path(s.shareId))
      assert.equal(before.statusCode, 200)
      await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'private' })
      const after = await anonymous(path(s.shareId), {
        'if-none-match': String(before.headers.etag),
      })
      assert.equal(after.statusCode, 404)
      assert.equal(after.headers.etag, undefined)
      assert.match(String(after.headers['cache-control']), /no-cache/)
      assert.doesNotMatch(String(after.headers['cache-control']), /public/)
      assert.doesNotMatch(after.body, /FREE/)
    })

    it('a status deleted is 404 at once', async () => {
      const s = await publicStatus()
      assert.equal((await anonymous(path(s.shareId))).statusCode, 200)
      assert.equal((await t.request(owner, 'DELETE', `/v1/status/${s.id}`)).statusCode, 204)
      assert.equal((await anonymous(path(s.shareId))).statusCode, 404)
    })

    it('a write nobody announces (straight into the database) shows once the cached render is RENDER_CACHE_MAX_AGE_MS old', async () => {
      const s = await publicStatus()
      const before = await anonymous(path(s.shareId))
      await t.database.db
        .updateTable('statuses')
        .set({ value: 'BEHIND-ITS-BACK', version: 1000 })
        .where('id', '=', s.id)
        .execute()
      const kept = await anonymous(path(s.shareId))
      assert.equal(kept.body, before.body, 'the render cache answered')
      clock.advance(RENDER_CACHE_MAX_AGE_MS + 1)
      const fresh = await anonymous(path(s.shareId))
      assert.match(fresh.body, /BEHIND-ITS-BACK/)
      assert.notEqual(fresh.headers.etag, before.headers.etag)
    })
  })

/**
 * A GET over a socket, as sent: the status line, every header in its order, the body. The
 * headers that differ per request (its id, the anonymous limit's count, the date) read `*`.
 */
async function rawGet(port: number, path: string): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  // note: write, not end: a client that half-closes may lose its answer (Node closes on it)
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
  const chunks: Buffer[] = []
  for await (const chunk of socket) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
    .toString('latin1')
    .replace(/^(x-request-id|x-ratelimit-remaining|x-ratelimit-reset|date): .*$/gim, '$1: *')
}

describe('over a socket', () => {
  let t2: TestApp
  let port: number
  before(async () => {
    // an in-process bus, as the suite's: on PostgreSQL a write behind the app's back may be
    // heard through the database, and the cache must keep its render for the comparison
    const events = new InProcessEventBus(STATUS_CHANGES)
    suite.after(() => events.close())
    const served = await makeApp(suite, {
      deps: {
        clock,
        events,
        anonRequestsPerMinute: 1_000_000,
        notifications: { autoStart: false },
      },
    })
    t2 = served
    await served.app.listen({ port: 0, host: '127.0.0.1' })
    port = (served.app.server.address() as { port: number }).port
  })

  for (const { view, path } of [
    ...VIEWS,
    { view: 'the endpoint badge', path: (shareId: string) => `/s/${shareId}/badge.json` },
  ])
    it(`${view}: an answer from the render cache is byte for byte the one that rendered it, headers and their order included`, async () => {
      const user = await t2.user()
      const s = await createStatus(t2, user, 'socket-room', {
        value: 'FREE',
        accessType: 'public',
        accessTypeHistory: 'public',
        accessTypeUserList: 'public',
      })
      const rendered = await rawGet(port, path(s.shareId))
      assert.match(rendered, /^HTTP\/1\.1 200 OK\r\n/)
      // behind the app's back: a new render would show it, the cached one does not
      await t2.database.db
        .updateTable('statuses')
        .set({ value: 'BEHIND-ITS-BACK', version: 1000 })
        .where('id', '=', s.id)
        .execute()
      const cached = await rawGet(port, path(s.shareId))
      assert.equal(cached, rendered)
      clock.advance(RENDER_CACHE_MAX_AGE_MS + 1)
      assert.match(await rawGet(port, path(s.shareId)), /BEHIND-ITS-BACK/, 'a render again')
    })
})

describe('variants and people', () => {
  it('each badge style and label has its own ETag and its own cached render', async () => {
    const s = await publicStatus()
    const urls = ['', '?style=flat-square', '?label=Office', '?style=social&label=Office'].map(
      (q) => `/s/${s.shareId}/badge.svg${q}`,
    )
    const tags = new Set<string>()
    for (const url of urls) tags.add(String((await anonymous(url)).headers.etag))
    assert.equal(tags.size, urls.length)
    // and each answers its own tag with 304, not another's
    const first = String((await anonymous(urls[0] as string)).headers.etag)
    assert.equal((await anonymous(urls[0] as string, { 'if-none-match': first })).statusCode, 304)
    assert.equal((await anonymous(urls[2] as string, { 'if-none-match': first })).statusCode, 200)
  })

  it('a new subscriber in a public user list shows on the share page at once', async () => {
    const s = await publicStatus()
    const before = await anonymous(`/s/${s.shareId}`)
    assert.doesNotMatch(before.body, /Stan Stranger/)
    const subscribed = await t.request(stranger, 'POST', `/v1/status/${s.id}/subscription`)
    assert.ok(subscribed.statusCode < 300, subscribed.body)
    const after = await anonymous(`/s/${s.shareId}`)
    assert.match(after.body, /Stan Stranger/)
  })

  it('a private share link never gets a shared-cacheable answer or an ETag', async () => {
    const s = await createStatus(t, owner, 'private-room', { value: 'SECRET' })
    const link = await t.request(owner, 'POST', `/v1/status/${s.id}/share-links`, {})
    assert.equal(link.statusCode, 201, link.body)
    const page = new URL((link.json() as { url: string }).url, 'http://statusd.test').pathname
    for (const url of [page, `${page}/badge.svg`]) {
      const res = await anonymous(url)
      assert.equal(res.statusCode, 200, url)
      assert.equal(res.headers['cache-control'], 'private, no-store')
      assert.equal(res.headers.etag, undefined)
    }
  })
})

describe('several instances (PostgreSQL)', { skip: postgresOnly }, () => {
  it("a change made through instance B reaches instance A's cached views within the live signal", async (ctx) => {
    const fresh = await testDatabase(ctx)
    const a = await makeApp(ctx, { databaseUrl: fresh.url })
    const b = await makeApp(ctx, { databaseUrl: fresh.url })
    const user = await a.user()
    const s = await createStatus(a, user, 'hall', { value: 'FREE', accessType: 'public' })
    const read = (url: string) => a.request(null, 'GET', url)
    const urls = VIEWS.map(({ path }) => path(s.shareId))
    for (const url of urls) assert.match((await read(url)).body, /FREE/)
    const patched = await b.request(user, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    assert.equal(patched.statusCode, 200)
    // the NOTIFY comes through the database: a bound on the wait, not a timing
    for (const url of urls)
      await waitUntil(async () => /BUSY/.test((await read(url)).body), `${url} on A shows BUSY`)
    // and B, which writes, shows its change in its very next read (before its NOTIFY is back)
    for (const url of urls) assert.match((await b.request(null, 'GET', url)).body, /BUSY/)
    const c = await b.request(user, 'PATCH', `/v1/status/${s.id}`, { value: 'CLOSED' })
    assert.equal(c.statusCode, 200)
    for (const url of urls) {
      const res = await b.request(null, 'GET', url)
      assert.match(res.body, /CLOSED/, `${url} on B`)
    }
  })
})
