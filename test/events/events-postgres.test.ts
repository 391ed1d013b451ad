import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import type pg from 'pg'
import type { OutboxTail } from '../../src/db/engine.ts'
import { openPostgres } from '../../src/db/postgres/open-postgres.ts'
import { outboxPosition, parseOutboxPosition } from '../../src/db/postgres/outbox-tail.ts'
import { PgEventBus } from '../../src/db/postgres/pg-event-bus.ts'
import { InProcessEventBus } from '../../src/lib/event-bus.ts'
import { STATUS_CHANGES, type StatusChange } from '../../src/modules/statuses/status-events.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { defer } from '../helpers/cleanup.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { createStatus } from '../helpers/sharing.ts'
import { SseTestClient, waitUntil } from '../helpers/sse.ts'

// docs/sharing.md#several-instances-postgresql-listennotify: with several instances on one
// PostgreSQL database, every instance delivers every change. Two apps on one database stand for two
// instances (test/multi/ runs real processes); the streams of one hear the writes made through the
// other.

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
}

const statusEvent = (e: { event: string; id: string | undefined; data: string }) => {
  assert.equal(e.event, 'status')
  return { id: Number(e.id), body: JSON.parse(e.data) as Record<string, unknown> }
}

describe('live updates across instances on PostgreSQL', { skip: postgresOnly }, () => {
  it('a stream on instance A gets the writes made through instance B, with their versions as ids', async (t) => {
    const fresh = await testDatabase(t)
    const a = await makeApp(t, { databaseUrl: fresh.url })
    const b = await makeApp(t, { databaseUrl: fresh.url })
    const base = await listen(a)
    const owner = await a.user()
    const s = await createStatus(a, owner, 'room-4', { value: 'FREE', accessType: 'public' })
    const share = await SseTestClient.connect(`${base}/v1/share/${s.shareId}/events`)
    const own = await SseTestClient.connect(`${base}/v1/status/${s.id}/events`, {
      'service-api-key': owner.key,
    })
    assert.deepEqual([share.status, own.status], [200, 200])
    const first = statusEvent(await share.nextEvent())
    assert.equal(statusEvent(await own.nextEvent()).id, first.id)

    const patched = await b.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    assert.equal(patched.statusCode, 200)
    for (const client of [share, own]) {
      const e = statusEvent(await client.nextEvent())
      assert.deepEqual([e.id, e.body.value], [first.id + 1, 'BUSY'], 'the next version, from B')
    }
    await b.request(owner, 'PATCH', `/v1/status/${s.id}`, { colorNo: 5 })
    const e = statusEvent(await share.nextEvent())
    assert.deepEqual([e.id, e.body.colorNo], [first.id + 2, 5])

    // deleted through B: A's streams say so and end
    assert.equal((await b.request(owner, 'DELETE', `/v1/status/${s.id}`)).statusCode, 204)
    const gone = await share.nextEvent()
    assert.equal(gone.event, 'unavailable')
    assert.deepEqual(JSON.parse(gone.data), { reason: 'deleted' })
    await share.ended
    share.close()
    own.close()
  })

  it("a write reaches every instance's streams even if its instance does nothing after the commit (the NOTIFY is part of the transaction)", async (t) => {
    const fresh = await testDatabase(t)
    const busDatabase = openPostgres(fresh.url, { poolSize: 1 })
    defer(t, () => busDatabase.close())
    // B announces nothing once a write has committed, as if it died right after its commit
    class AfterCommitSilent extends PgEventBus<StatusChange> {
      override async publish(): Promise<void> {}
    }
    const silent = new AfterCommitSilent({
      ...STATUS_CHANGES,
      db: busDatabase.db,
      openClient: () => busDatabase.dedicatedClient('listen') as pg.Client,
    })
    await silent.start()
    const a = await makeApp(t, { databaseUrl: fresh.url })
    const b = await makeApp(t, { databaseUrl: fresh.url, deps: { events: silent } })
    const base = await listen(a)
    const owner = await a.user()
    const s = await createStatus(a, owner, 'room-6', { value: 'FREE', accessType: 'public' })
    const client = await SseTestClient.connect(`${base}/v1/share/${s.shareId}/events`)
    const first = statusEvent(await client.nextEvent())
    assert.equal(
      (await b.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })).statusCode,
      200,
    )
    const e = statusEvent(await client.nextEvent())
    assert.deepEqual([e.id, e.body.value], [first.id + 1, 'BUSY'])
    assert.equal((await b.request(owner, 'DELETE', `/v1/status/${s.id}`)).statusCode, 204)
    const gone = await client.nextEvent()
    assert.equal(gone.event, 'unavailable')
    assert.deepEqual(JSON.parse(gone.data), { reason: 'deleted' })
    await client.ended
    client.close()
  })

  it('changes lost while the LISTEN connection was down reach the streams after the reconnect (resync)', async (t) => {
    const fresh = await testDatabase(t)
    // A's bus reconnects only when the test opens the gate: a gap of known length
    const busDatabase = openPostgres(fresh.url, { poolSize: 1 })
    defer(t, () => busDatabase.close())
    let gate: Promise<void> = Promise.resolve()
    let open = () => {}
    const bus = new PgEventBus({
      ...STATUS_CHANGES,
      db: busDatabase.db,
      openClient: async () => {
        await gate
        return busDatabase.dedicatedClient('listen') as pg.Client
      },
      retryMs: 20,
    })
    await bus.start()
    // A's outbox relay (every second by default) would also bring the changes during the gap
    // on a slow run: out of the way, so the gap is the bus's alone (the relay has its own test)
    const a = await makeApp(t, {
      databaseUrl: fresh.url,
      deps: { events: bus, liveRelayIntervalMs: 3_600_000 },
    })
    const b = await makeApp(t, { databaseUrl: fresh.url })
    // the gate opens at the end even when the test fails, so the bus can close
    defer(t, () => open())
    const base = await listen(a)
    const owner = await a.user()
    const s = await createStatus(a, owner, 'room-5', { value: 'FREE', accessType: 'public' })
    const client = await SseTestClient.connect(`${base}/v1/share/${s.shareId}/events`)
    const first = statusEvent(await client.nextEvent())

    gate = new Promise((resolve) => {
      open = resolve
    })
    await sql`select pg_terminate_backend(${bus.listenerPid})`.execute(b.database.db)
    await waitUntil(() => !bus.listening, 'A lost its LISTEN connection')
    // through B and through A itself: both NOTIFYs go unheard by A
    await b.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    await a.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'AWAY' })
    assert.deepEqual(client.pendingEvents(), [], 'nothing reached the stream during the gap')

    open()
    const caughtUp = statusEvent(await client.nextEvent())
    assert.deepEqual(
      [caughtUp.id, caughtUp.body.value],
      [first.id + 2, 'AWAY'],
      'after the reconnect the stream re-read the status: the current state, once',
    )
    await b.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BACK' })
    const next = statusEvent(await client.nextEvent())
    assert.deepEqual([next.id, next.body.value], [first.id + 3, 'BACK'], 'and delivers again')
    client.close()
  })
  it("a change committed since the relay's position was taken on another server (a failover) still reaches the streams", async (t) => {
    // docs/postgres.md#the-outbox-changes-no-notification-can-lose: a promoted standby hands out
    // transaction ids from where its log ended, which may be below the horizon the relay read
    // on the old primary. A hears nothing by NOTIFY here (a bus of its own process), so only
    // its relay can bring B's writes; the relay reads when the test says (runOnce).
    const fresh = await testDatabase(t)
    const a = await makeApp(t, {
      databaseUrl: fresh.url,
      deps: {
        events: new InProcessEventBus({ topicOf: STATUS_CHANGES.topicOf }),
        liveRelayIntervalMs: 3_600_000,
      },
    })
    const b = await makeApp(t, { databaseUrl: fresh.url })
    const relay = a.app.liveRelay
    assert.ok(relay)
    const tail = a.database.outboxTail as OutboxTail
    const here = parseOutboxPosition(await tail.start()).server
    const base = await listen(a)
    const owner = await a.user()
    const s = await createStatus(a, owner, 'room-7', { value: 'FREE', accessType: 'public' })
    const client = await SseTestClient.connect(`${base}/v1/share/${s.shareId}/events`)
    let version = statusEvent(await client.nextEvent()).id
    await relay.runOnce()

    // the position the relay holds as it reads next: as after a failover, above the id of the
    // write just committed (B's), so reading on from it would skip that write
    const positions: [string, string, (txId: bigint) => string][] = [
      [
        'OTHER',
        "another server, below this one's xmax",
        (txId) => outboxPosition(String(txId + 1n), `${here}0`),
      ],
      [
        'AHEAD',
        'this server, above its xmax',
        (txId) => outboxPosition(String(txId + 1_000_000n), here),
      ],
    ]
    for (const [value, where, position] of positions) {
      const res = await b.request(owner, 'PATCH', `/v1/status/${s.id}`, { value })
      assert.equal(res.statusCode, 200, res.body)
      const { rows } = await sql<{ tx_id: string }>`select max(tx_id::text::numeric)::text as tx_id
        from outbox_events where status_id = ${s.id}`.execute(a.database.db)
      const txId = BigInt((rows[0] as { tx_id: string }).tx_id)
      const read = tail.read
      tail.read = (_from, types, limit) => {
        tail.read = read
        return read(position(txId), types, limit)
      }
      await relay.runOnce()
      const e = statusEvent(await client.nextEvent())
      assert.deepEqual([e.id, e.body.value], [version + 1, value], where)
      version = e.id
    }
    // and it reads on from a position of this server
    await b.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BACK' })
    await relay.runOnce()
    const next = statusEvent(await client.nextEvent())
    assert.deepEqual([next.id, next.body.value], [version + 1, 'BACK'])
    client.close()
  })
})
