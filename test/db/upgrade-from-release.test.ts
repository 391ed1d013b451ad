import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { before, describe, it } from 'node:test'
import type { FixtureRecord, RecordedRead } from '../../scripts/make-upgrade-fixture.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { DEFAULT_PLANS, type Plans } from '../../src/modules/plans/plans.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { suiteLifetime, tempDir } from '../helpers/cleanup.ts'
import { testClock } from '../helpers/clock.ts'
import { emptyPostgresDatabase, TEST_ENGINE } from '../helpers/engine.ts'
import { ROOT } from '../helpers/processes.ts'
import { startReceiver } from '../helpers/webhook-receiver.ts'

// docs/operations.md#upgrades: from 0.1.0 on, a database made by any release opens with the
// current code. Each release leaves a fixture made by its own code
// (scripts/make-upgrade-fixture.ts: a SQLite file, a plain pg_dump, and what its API
// answered); here the current code opens it on the engine under test and applies the
// migrations added since (a migration named before one the release applied is refused:
// migrations only append), and then, over real HTTP:
// - every read the release answered answers the same now: same status, and every field the
//   release sent with the same value (within /v1 the API only grows, docs/api.md#base-url-and-versioning);
// - keys, sessions and passwords made by the release still work, a revoked key stays refused,
//   a confined key stays confined;
// - the notification the release recorded but had not delivered is delivered;
// - writes go on: values set by key, by id and by an updater, history continuing below them,
//   and new statuses, keys, share links and boards beside the old ones.
// The clock stands where it stood when the release answered, so that what it computes
// (sessions and share links ending, staleness) matches; the plans keep history forever, so
// that the fixture's age never hides its history.

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'upgrade')
const VERSIONS = fs
  .readdirSync(FIXTURES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort()

const PLANS: Plans = Object.fromEntries(
  Object.entries(DEFAULT_PLANS).map(([name, plan]) => [name, { ...plan, historyDays: null }]),
)

/** Fields whose value is new on every request. */
const PER_REQUEST = new Set(['requestId'])

/**
 * Asserts that `actual` holds all of `expected`: the same primitives, arrays of the same
 * length whose items hold the expected ones, objects with at least the expected fields.
 */
function assertHolds(actual: unknown, expected: unknown, where: string): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${where}: an array, got ${JSON.stringify(actual)}`)
    assert.equal(actual.length, expected.length, `${where}: its length`)
    for (const [i, item] of expected.entries()) assertHolds(actual[i], item, `${where}[${i}]`)
    return
  }
  if (expected !== null && typeof expected === 'object') {
    assert.ok(
      actual !== null && typeof actual === 'object' && !Array.isArray(actual),
      `${where}: an object, got ${JSON.stringify(actual)}`,
    )
    for (const [key, value] of Object.entries(expected)) {
      if (PER_REQUEST.has(key)) continue
      assert.ok(key in actual, `${where}.${key}: missing`)
      assertHolds((actual as Record<string, unknown>)[key], value, `${where}.${key}`)
    }
    return
  }
  assert.equal(actual, expected, where)
}

/**
 * Loads a plain pg_dump into the database at `url` with psql, stopping at the first error.
 * note: without the dump's `\restrict` and `\unrestrict` lines (pg_dump 15.14 and later
 * write them), which a psql older than those does not know; they guard against a dump from a
 * server one does not trust, and this one is the repository's own.
 */
function loadDump(url: string, file: string): void {
  const dump = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !/^\\(un)?restrict /.test(line))
    .join('\n')
  const psql = spawnSync(
    'psql',
    ['--no-psqlrc', '--quiet', '--set', 'ON_ERROR_STOP=1', '--file', '-', url],
    { encoding: 'utf8', input: dump },
  )
  if (psql.error)
    throw new Error(`psql could not run (PostgreSQL's client programs): ${psql.error.message}`)
  assert.equal(psql.status, 0, `psql loading ${file}: ${psql.stderr}`)
}

for (const version of VERSIONS) {
  const dir = path.join(FIXTURES, version)
  const record: FixtureRecord = JSON.parse(
    fs.readFileSync(path.join(dir, `${TEST_ENGINE}.json`), 'utf8'),
  )

  describe(`a ${TEST_ENGINE} database made by statusd ${version}`, () => {
    const suite = suiteLifetime()
    let t: TestApp
    let base: string
    let applied: string[]
    const clock = testClock(Date.parse(record.readAt))

    before(async () => {
      let url: string
      if (TEST_ENGINE === 'sqlite') {
        // a copy: the fixture itself stays as the release made it
        const file = path.join(tempDir(suite, 'statusd-upgrade-'), 'statusd.db')
        fs.copyFileSync(path.join(dir, 'sqlite.db'), file)
        url = `sqlite:${file}`
      } else {
        const database = await emptyPostgresDatabase(suite)
        assert.ok(database, 'the test role may create databases (a plain dump fills a whole one)')
        loadDump(database.url, path.join(dir, 'postgres.sql'))
        url = database.url
      }
      const database = createDatabase(url, { poolSize: 1 })
      try {
        applied = await migrateToLatest(database.db)
      } finally {
        await database.close()
      }
      t = await makeApp(suite, {
        databaseUrl: url,
        plans: PLANS,
        deps: {
          clock,
          signup: 'open',
          publicUrl: record.publicUrl,
          // the delivery worker runs when a test says so
          notifications: { autoStart: false },
          webhookAllowNetworks: ['127.0.0.0/8'],
        },
      })
      await t.app.listen({ port: 0, host: '127.0.0.1' })
      const address = t.app.server.address()
      assert.ok(address !== null && typeof address === 'object')
      base = `http://127.0.0.1:${address.port}`
    })
    /** A request over HTTP as one of the fixture's people (or nobody). */
    const call = async (
      as: RecordedRead['as'] | { key: string } | { session: string },
      method: string,
      url: string,
      body?: unknown,
    ) => {
      const headers: Record<string, string> = {}
      const [who, kind] = typeof as === 'string' ? as.split('.') : []
      const user = who === undefined ? undefined : record.users[who]
      const key =
        typeof as === 'object' && 'key' in as
          ? as.key
          : kind === 'key'
            ? user?.key
            : kind === 'scopedKey'
              ? user?.scopedKey
              : undefined
      const session =
        typeof as === 'object' && 'session' in as
          ? as.session
          : kind === 'session'
            ? user?.session
            : undefined
      if (key !== undefined) headers['service-api-key'] = key
      if (session !== undefined) {
        headers.cookie = `statusd_session=${session}`
        headers['sec-fetch-site'] = 'same-origin'
      }
      if (body !== undefined) headers['content-type'] = 'application/json'
      const res = await fetch(`${base}${url}`, {
        method,
        headers,
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
      const text = await res.text()
      return {
        status: res.status,
        // biome-ignore lint/suspicious/noExplicitAny: a JSON answer the test reads field by field
        body: (text === '' ? undefined : JSON.parse(text)) as any,
        headers: res.headers,
      }
    }

    it('the migrations added since the release are applied, and only those', (ctx) => {
      const since = Object.keys(migrations)
        .sort()
        .filter((name) => name > record.schemaVersion)
      assert.deepEqual(applied, since)
      ctx.diagnostic(`from ${record.schemaVersion}: applied ${applied.join(', ') || 'nothing'}`)
    })

    it('every read the release answered answers the same: status, and each field it sent', async () => {
      for (const read of record.reads) {
        const res = await call(read.as, 'GET', read.url)
        const where = `GET ${read.url} as ${read.as}`
        assert.equal(res.status, read.status, `${where}: ${JSON.stringify(res.body)}`)
        assertHolds(res.body, read.body, where)
      }
    })

    it('the notification the release left undelivered is delivered by the current code', async (ctx) => {
      // the channel's receiver, here now: its address is the one thing the release could not know
      const receiver = await startReceiver(ctx)
      const db = t.app.database.db
      const row = await db
        .selectFrom('channels')
        .select('config')
        .where('id', '=', record.channelId)
        .executeTakeFirstOrThrow()
      const config = { ...JSON.parse(row.config), url: `${receiver.origin}/statusd` }
      await db
        .updateTable('channels')
        .set({ config: JSON.stringify(config) })
        .where('id', '=', record.channelId)
        .execute()
      await t.app.deliveryWorker.runOnce()
      const [delivered] = await receiver.received(1)
      assert.equal(receiver.requests.length, 1, 'one rule of hers matched one write')
      const { build } = record.statuses
      const body = JSON.parse(delivered?.body ?? '{}')
      assert.equal(body.status?.id, build.id, delivered?.body)
      assert.equal(body.status?.value, 'FAILING', delivered?.body)
      const log = await call(
        'Olivia.key',
        'GET',
        `/v1/user/channels/${record.channelId}/deliveries`,
      )
      assert.equal(log.status, 200)
      assert.equal(log.body.length, 1, JSON.stringify(log.body))
    })

    it("the release's keys, sessions and passwords still let their people in", async () => {
      for (const [name, user] of Object.entries(record.users)) {
        const byKey = await call(`${name}.key`, 'GET', '/v1/checkAuth')
        assert.equal(byKey.status, 200, `${name}'s key`)
        assert.equal(byKey.body.userId, user.id)
        const bySession = await call(`${name}.session`, 'GET', '/v1/user')
        assert.equal(bySession.status, 200, `${name}'s session`)
        assert.equal(bySession.body.id, user.id)
        const login = await call('anonymous', 'POST', '/v1/auth/login', {
          email: user.email,
          password: record.password,
        })
        assert.equal(login.status, 200, `${name} signs in with the password`)
        const cookie = /statusd_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1]
        assert.ok(cookie)
        assert.equal((await call({ session: cookie }, 'GET', '/v1/user')).body.id, user.id)
      }
      const wrong = await call('anonymous', 'POST', '/v1/auth/login', {
        email: record.users.Olivia?.email,
        password: `${record.password}!`,
      })
      assert.equal(wrong.status, 401, 'a wrong password is still wrong')
    })

    it('a key the release revoked stays refused; a confined key stays confined', async () => {
      const revoked = await call({ key: record.revokedKey }, 'GET', '/v1/checkAuth')
      assert.equal(revoked.status, 401)
      const { room, build } = record.statuses
      const inside = await call('Olivia.scopedKey', 'PATCH', `/v1/status/${room.id}`, {
        value: 'FREE',
      })
      assert.equal(inside.status, 200, JSON.stringify(inside.body))
      const outside = await call('Olivia.scopedKey', 'PATCH', `/v1/status/${build.id}`, {
        value: 'PASSING',
      })
      assert.equal(outside.status, 404, 'a status outside its confinement does not exist to it')
      const name = await call('Olivia.scopedKey', 'PATCH', `/v1/status/${room.id}`, {
        name: 'Renamed',
      })
      assert.equal(name.status, 403, 'status:value sets only the value')
      const build2 = await call('Olivia.key', 'GET', `/v1/status/${build.id}`)
      assert.equal(build2.body.value, 'FAILING', 'the refused write changed nothing')
    })

    it("writes go on, and each one continues the release's history", async () => {
      const { room, build } = record.statuses
      const before = (await call('Olivia.key', 'GET', `/v1/status/${room.id}/history`)).body
      const writes: [RecordedRead['as'], string, string, unknown, string][] = [
        ['Olivia.key', 'POST', `/v1/status-keys/${room.key}`, { value: 'BUSY' }, 'BUSY'],
        ['Uma.key', 'PATCH', `/v1/status/${room.id}`, { value: 'FREE' }, 'FREE'],
        ['Olivia.session', 'PATCH', `/v1/status/${room.id}`, { value: 'BUSY' }, 'BUSY'],
      ]
      for (const [as, method, url, body, value] of writes) {
        const res = await call(as, method, url, body)
        assert.equal(res.status, 200, `${method} ${url} as ${as}: ${JSON.stringify(res.body)}`)
        assert.equal(res.body.value, value)
      }
      const history = (await call('Olivia.key', 'GET', `/v1/status/${room.id}/history`)).body
      assert.deepEqual(
        history.slice(0, writes.length).map((e: { value: string }) => e.value),
        writes.map((w) => w[4]).reverse(),
        'the new entries, newest first',
      )
      assertHolds(history.slice(writes.length), before, 'the history below them')
      const shared = (await call('anonymous', 'GET', `/v1/share/${room.shareId}`)).body
      assert.equal(shared.value, 'BUSY', 'the public view shows the last write')
      const sam = await call('Sam.key', 'PATCH', `/v1/status/${build.id}`, { value: 'PASSING' })
      assert.equal(sam.status, 403, 'a subscriber still may not write')
    })

    it("new statuses, keys, roles, share links and boards join the release's", async () => {
      const { room, build } = record.statuses
      const made = await call('Olivia.key', 'POST', '/v1/status-keys/room-5', { value: 'FREE' })
      assert.equal(made.status, 201, JSON.stringify(made.body))
      const key = await call('Olivia.session', 'POST', '/v1/user/api-keys', { label: 'new' })
      assert.equal(key.status, 201, JSON.stringify(key.body))
      assert.equal((await call({ key: key.body.key }, 'GET', '/v1/checkAuth')).status, 200)
      // the invitation the release left waiting: accepted now
      const [invitation] = (await call('Sam.key', 'GET', '/v1/user/invitations')).body
      assert.ok(invitation, 'the pending invitation')
      const accepted = await call('Sam.key', 'POST', `/v1/user/invitations/${invitation.id}/accept`)
      assert.equal(accepted.status, 200, JSON.stringify(accepted.body))
      const bySam = await call('Sam.key', 'PATCH', `/v1/status/${room.id}`, { value: 'FREE' })
      assert.equal(bySam.status, 200, 'an updater now')
      const link = await call('Olivia.key', 'POST', `/v1/status/${build.id}/share-links`, {})
      assert.equal(link.status, 201, JSON.stringify(link.body))
      const links = (await call('Olivia.key', 'GET', `/v1/status/${build.id}/share-links`)).body
      assert.equal(links.length, 2, "the release's link and the new one")
      const board = await call('Olivia.key', 'PATCH', `/v1/boards/${record.board.id}`, {
        statusIds: [room.id, build.id, made.body.id],
      })
      assert.equal(board.status, 200, JSON.stringify(board.body))
      const wall = (await call('anonymous', 'GET', `/b/${record.board.shareId}/json`)).body
      assert.equal(wall.tiles.length, 3)
      const rule = await call('Olivia.key', 'PUT', `/v1/status/${room.id}/notifications`, {
        when: 'any',
        channels: [record.channelId],
      })
      assert.equal(rule.status, 200, JSON.stringify(rule.body))
    })
  })
}
