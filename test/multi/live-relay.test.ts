import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DB } from '../../src/db/database.ts'
import type { Database, OutboxTail } from '../../src/db/engine.ts'
import { openPostgres } from '../../src/db/postgres/open-postgres.ts'
import { outboxPosition, parseOutboxPosition } from '../../src/db/postgres/outbox-tail.ts'
import { PgEventBus } from '../../src/db/postgres/pg-event-bus.ts'
import { InProcessEventBus } from '../../src/lib/event-bus.ts'
import { STATUS_CHANGES, type StatusChange } from '../../src/modules/statuses/status-events.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { defer, suiteLifetime } from '../helpers/cleanup.ts'
import { freshDatabase, postgresOnly } from '../helpers/engine.ts'
import { type Server, startServer } from '../helpers/processes.ts'
import { SseTestClient } from '../helpers/sse.ts'

// docs/postgres.md#live-updates-across-instances: a change reaches the streams of every
// instance even when its NOTIFY never arrives, because every instance also reads the status
// events committed to the outbox, in commit order.
//
// The writer whose NOTIFY "never arrives" is an app in this process on the same database
// with a bus that tells nobody (SilentBus): its writes commit, with their outbox rows, and no
// other instance is told. The streams are on a real `statusd serve` process.

const AT = '2026-01-01T00:00:00.000Z'

/**
 * A bus whose notifications never reach another process: its writers record their changes
 * in the outbox, as with PostgreSQL's bus, and what it publishes reaches this process only.
 */
class SilentBus extends InProcessEventBus<StatusChange> {
  readonly relayedByOutbox = true
}

describe('live updates from the outbox (PostgreSQL)', { skip: postgresOnly }, () => {
  const lifetime = suiteLifetime()
  let url = ''
  let server: Server
  let silent: TestApp
  let user: TestUser
  let statusId = ''
  let lastVersion = 0

  before(async () => {
    const fresh = await freshDatabase()
    defer(lifetime, () => fresh.drop())
    url = fresh.url
    // both at once (each migrates; the migrator takes turns); a short relay interval: the
    // test waits for it, never measures it
    ;[server, silent] = await Promise.all([
      startServer(lifetime, url, { LIVE_RELAY_INTERVAL_MS: '50' }),
      makeApp(lifetime, {
        databaseUrl: url,
        deps: { events: new SilentBus({ topicOf: STATUS_CHANGES.topicOf }) },
      }),
    ])
    user = await silent.user()
    const made = await silent.request(user, 'POST', '/v1/status-keys/room-4', { value: 'FREE' })
    assert.equal(made.statusCode, 201, made.body)
    statusId = made.json().id
  })

  const stream = async (lastEventId?: number) => {
    const client = await SseTestClient.connect(`${server.url}/v1/status/${statusId}/events`, {
      'service-api-key': user.key,
      ...(lastEventId !== undefined && { 'last-event-id': String(lastEventId) }),
    })
    assert.equal(client.status, 200)
    return client
  }
  const silentSet = async (value: string) => {
    const res = await silent.request(user, 'PATCH', `/v1/status/${statusId}`, { value })
    assert.equal(res.statusCode, 200, res.body)
    return Number(res.headers.etag?.toString().replace(/"/g, '').split('.').pop())
  }
  const serverSet = async (value: string) => {
    const res = await fetch(`${server.url}/v1/status/${statusId}`, {
      method: 'PATCH',
      headers: { 'service-api-key': user.key, 'content-type': 'application/json' },
      body: JSON.stringify({ value }),
    })
    assert.equal(res.status, 200)
    return Number(res.headers.get('etag')?.replace(/"/g, '').split('.').pop())
  }

  /** The types of the outbox rows the status's writes recorded (sorted). */
  const statusEventTypes = async () =>
    (
      await silent.database.db
        .selectFrom('outbox_events')
        .select('type')
        .where('status_id', '=', statusId)
        .where('type', 'in', ['status.changed', 'live.status'])
        .execute()
    )
      .map((r) => r.type)
      .sort()

  it('a value write on a status without a notification rule, committed without a NOTIFY, reaches a stream on another instance', async () => {
    // docs/notifications.md#delivery: no rule, so no status.changed event; the write's
    // live.status event is what the relay reads
    const client = await stream()
    try {
      const first = await client.nextEvent()
      assert.equal(JSON.parse(first.data).value, 'FREE')
      const version = await silentSet('BUSY')
      const event = await client.nextEvent()
      assert.equal(event.id, String(version))
      assert.equal(JSON.parse(event.data).value, 'BUSY')
      assert.equal(version, Number(first.id) + 1)
      assert.deepEqual(await statusEventTypes(), ['live.status', 'live.status'])
      lastVersion = version
    } finally {
      client.close()
    }
  })

  it('a value write on a status with a notification rule, committed without a NOTIFY, reaches it by its status.changed event', async () => {
    const rule = await silent.request(user, 'PUT', `/v1/status/${statusId}/notifications`, {
      when: 'any',
    })
    assert.equal(rule.statusCode, 200, rule.body)
    const client = await stream(lastVersion)
    try {
      const version = await silentSet('AWAY')
      const event = await client.nextEvent()
      assert.deepEqual([event.id, JSON.parse(event.data).value], [String(version), 'AWAY'])
      assert.deepEqual(
        await statusEventTypes(),
        ['live.status', 'live.status', 'status.changed'],
        'the status event serves the relay: no live.status besides',
      )
      lastVersion = version
    } finally {
      client.close()
    }
  })

  it('every version once and in order, whether heard by NOTIFY, read from the outbox, or both', async () => {
    // resumes at the current version: nothing is sent again (Last-Event-ID)
    const client = await stream(lastVersion)
    try {
      const versions: number[] = []
      // each write waits for its event: writes through the server are heard by NOTIFY and
      // read from the outbox again; the silent writer's only from the outbox
      for (let i = 0; i < 6; i += 1) {
        const version = i % 2 === 0 ? await serverSet(`v${i}`) : await silentSet(`v${i}`)
        const event = await client.nextEvent()
        assert.deepEqual([event.id, JSON.parse(event.data).value], [String(version), `v${i}`])
        versions.push(version)
      }
      // a last silent write: the relay reads in commit order, so when it arrives any second
      // sending of the writes before it would have come first
      const final = await silentSet('final')
      const last = await client.nextEvent()
      assert.deepEqual([last.id, JSON.parse(last.data).value], [String(final), 'final'])
      assert.deepEqual(
        versions,
        Array.from({ length: 6 }, (_, i) => lastVersion + 1 + i),
        'one event per version, none twice, in order',
      )
      assert.deepEqual(client.pendingEvents(), [], 'nothing sent twice')
      lastVersion = final
    } finally {
      client.close()
    }
  })

  it('a burst of silent writes ends at the last version, ids rising, none repeated', async () => {
    const client = await stream(lastVersion)
    try {
      let final = 0
      for (let i = 0; i < 20; i += 1) final = await silentSet(`burst ${i}`)
      const ids: number[] = []
      for (;;) {
        const event = await client.nextEvent()
        ids.push(Number(event.id))
        if (Number(event.id) === final) {
          assert.equal(JSON.parse(event.data).value, 'burst 19')
          break
        }
      }
      // the feed re-reads the row, so a burst may arrive as fewer events (the latest state)
      for (let i = 1; i < ids.length; i += 1)
        assert.ok((ids[i] as number) > (ids[i - 1] as number), `ids rise: ${ids.join(',')}`)
      lastVersion = final
    } finally {
      client.close()
    }
  })

  it('a change of settings committed without a NOTIFY reaches the stream too', async () => {
    const client = await stream()
    try {
      // attached and up to date before the write, so only the outbox can bring it
      assert.equal((await client.nextEvent()).id, String(lastVersion))
      const res = await silent.request(user, 'PATCH', `/v1/status/${statusId}`, {
        name: 'Room four',
      })
      assert.equal(res.statusCode, 200, res.body)
      const event = await client.nextEvent()
      assert.deepEqual(
        [event.id, JSON.parse(event.data).name],
        [String(lastVersion + 1), 'Room four'],
      )
      lastVersion += 1
    } finally {
      client.close()
    }
  })

  describe('the outbox in commit order (Database.outboxTail)', () => {
    let database: Database
    let tail: OutboxTail
    before(() => {
      database = createDatabase(url, { poolSize: 3 })
      defer(lifetime, () => database.close())
      tail = database.outboxTail as OutboxTail
      assert.ok(tail, 'PostgreSQL reads its outbox in commit order')
    })

    // a type of its own, so that only this test's rows are read (done: no worker takes them)
    const TYPE = 'test.order'
    const record = (db: Kysely<DB>, id: string, forStatus = statusId) =>
      sql`insert into outbox_events (id, type, status_id, user_id, channel_id, payload, created_at, done_at)
          values (${id}, ${TYPE}, ${forStatus}, null, null, '{}', ${AT}, ${AT})`.execute(db)

    it('an event whose transaction began first but committed last is read once it commits', async () => {
      const start = await tail.start()
      // the early transaction takes its id and records, but does not commit yet
      const next = await database.db.connection().execute(async (conn) => {
        await sql`begin`.execute(conn)
        await record(conn, 'evt_early', 'st_early')
        // a later transaction records and commits meanwhile: read at once
        await database.db.transaction().execute((tx) => record(tx, 'evt_late', 'st_late'))
        const whileOpen = await tail.read(start, [TYPE], 10)
        assert.deepEqual(
          whileOpen.changed.map((c) => c.statusId),
          ['st_late'],
          'the committed one, not the open one',
        )
        await sql`commit`.execute(conn)
        return whileOpen.next
      })
      // the early one is past where the next read starts (it was still open): not skipped
      const page = await tail.read(next, [TYPE], 10)
      assert.ok(
        page.changed.some((c) => c.statusId === 'st_early'),
        JSON.stringify(page.changed),
      )
      assert.equal(page.complete, true)
    })

    it('a status reads with its version now', async () => {
      const start = await tail.start()
      await database.db.transaction().execute((tx) => record(tx, 'evt_here', statusId))
      const page = await tail.read(start, [TYPE], 10)
      assert.deepEqual(
        page.changed.find((c) => c.statusId === statusId),
        { statusId, version: lastVersion, types: [TYPE] },
      )
    })

    it('a row from another cluster (a transaction id not given out here yet) is not news', async () => {
      const start = await tail.start()
      await database.db.transaction().execute(async (tx) => {
        await record(tx, 'evt_foreign', 'st_foreign')
        await sql`update outbox_events set tx_id = '999999999999'::xid8 where id = 'evt_foreign'`.execute(
          tx,
        )
      })
      const page = await tail.read(start, [TYPE], 10)
      assert.equal(
        page.changed.find((c) => c.statusId === 'st_foreign'),
        undefined,
      )
    })

    it('a position taken on another server, or above the transaction ids this one gave out, reads nothing and starts again here (a failover, a restart)', async () => {
      const here = parseOutboxPosition(await tail.start())
      await database.db.transaction().execute((tx) => record(tx, 'evt_moved', 'st_moved'))
      const elsewhere = [
        outboxPosition(here.xid, `${here.server}1`),
        outboxPosition(String(BigInt(here.xid) + 1_000_000n), here.server),
        'not a position',
      ]
      for (const from of elsewhere) {
        const page = await tail.read(from, [TYPE], 10)
        assert.deepEqual([page.restarted, page.complete, page.changed], [true, false, []], from)
        const next = parseOutboxPosition(page.next)
        assert.equal(next.server, here.server, 'a position on this server')
        assert.ok(BigInt(next.xid) >= BigInt(here.xid))
      }
      const page = await tail.read(outboxPosition(here.xid, here.server), [TYPE], 10)
      assert.equal(page.restarted, false)
      assert.ok(page.changed.some((c) => c.statusId === 'st_moved'))
    })

    it('asked for some statuses only: only their changes count toward the batch', async () => {
      const start = await tail.start()
      await database.db.transaction().execute(async (tx) => {
        for (const n of [1, 2, 3]) await record(tx, `evt_other_${n}`, `other_${n}`)
        await record(tx, 'evt_asked', statusId)
      })
      const page = await tail.read(start, [TYPE], 1, [statusId, 'st_unchanged'])
      assert.equal(page.complete, true, 'three other statuses changed, one asked for')
      assert.deepEqual(
        page.changed.map((c) => c.statusId),
        [statusId],
      )
      const none = await tail.read(start, [TYPE], 1, [])
      assert.deepEqual([none.complete, none.changed], [true, []])
    })

    it('more statuses than the batch: says it is not complete', async () => {
      const start = await tail.start()
      await database.db.transaction().execute(async (tx) => {
        for (const n of [1, 2, 3]) await record(tx, `evt_many_${n}`, `gone_${n}`)
      })
      const page = await tail.read(start, [TYPE], 2)
      assert.equal(page.complete, false)
      assert.equal(page.changed.length, 2)
      // note: a transaction of another test open on the cluster holds the horizon back, so
      // the read may also list statuses recorded before `start` (a real one among them)
      for (const change of page.changed.filter((c) => c.statusId.startsWith('gone_')))
        assert.equal(change.version, null, 'a status that is gone')
    })
  })

  it('a write whose NOTIFY statement fails is committed and answered, and reaches the other instance by the outbox', async (t) => {
    // the writer's bus listens on the database but sends its NOTIFY through a pool that
    // reaches nothing: every NOTIFY statement fails (docs/postgres.md#how-a-write-reaches-postgresql)
    const listening = openPostgres(url, { poolSize: 1 })
    const unreachable = openPostgres('postgres://statusd@127.0.0.1:1/nowhere', { poolSize: 1 })
    const failing = new PgEventBus({
      ...STATUS_CHANGES,
      db: unreachable.db,
      openClient: () => listening.dedicatedClient('listen'),
    })
    defer(t, async () => {
      await failing.close()
      await unreachable.close()
      await listening.close()
    })
    await failing.start()
    const writer = await makeApp(t, { databaseUrl: url, deps: { events: failing } })
    const client = await stream()
    try {
      assert.equal((await client.nextEvent()).id, String(lastVersion))
      const res = await writer.request(user, 'PATCH', `/v1/status/${statusId}`, {
        value: 'NO NOTIFY',
      })
      assert.equal(res.statusCode, 200, res.body)
      const event = await client.nextEvent()
      assert.deepEqual(
        [event.id, JSON.parse(event.data).value],
        [String(lastVersion + 1), 'NO NOTIFY'],
      )
      lastVersion += 1
    } finally {
      client.close()
    }
  })

  it('a deletion committed without a NOTIFY ends the stream on the other instance', async () => {
    const client = await stream()
    try {
      assert.equal((await client.nextEvent()).id, String(lastVersion))
      const res = await silent.request(user, 'DELETE', `/v1/status/${statusId}`)
      assert.equal(res.statusCode, 204, res.body)
      const event = await client.nextEvent()
      assert.deepEqual(
        [event.event, JSON.parse(event.data)],
        ['unavailable', { reason: 'deleted' }],
      )
      await client.ended
    } finally {
      client.close()
    }
  })
})
