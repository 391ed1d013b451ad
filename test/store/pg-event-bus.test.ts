import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import type pg from 'pg'
import { openPostgres, type PostgresDatabase } from '../../src/db/postgres/open-postgres.ts'
import { PgEventBus } from '../../src/db/postgres/pg-event-bus.ts'
import type { BusLog } from '../../src/lib/event-bus.ts'
import {
  parseStatusChange,
  STATUS_CHANGES,
  type StatusChange,
} from '../../src/modules/statuses/status-events.ts'
import { freshDatabase, postgresOnly, type TestDatabase } from '../helpers/engine.ts'
import { waitUntil } from '../helpers/sse.ts'

// docs/sharing.md#several-instances-postgresql-listennotify: with several instances on one
// PostgreSQL database, every instance delivers every change. Each bus here stands for one instance:
// its own pool and its own LISTEN connection.

/** A logger that keeps its lines, so tests can see what the bus said. */
function memoryLog(): BusLog & { lines: { level: string; msg: string }[] } {
  const lines: { level: string; msg: string }[] = []
  const at = (level: string) => (_obj: unknown, msg?: string) => {
    lines.push({ level, msg: String(msg) })
  }
  return { lines, info: at('info'), warn: at('warn'), error: at('error') } as BusLog & {
    lines: { level: string; msg: string }[]
  }
}

interface Instance {
  database: PostgresDatabase
  bus: PgEventBus<StatusChange>
  log: ReturnType<typeof memoryLog>
}

/** One "instance": a pool on the database and a started bus, closed by the test's cleanup. */
async function instance(
  url: string,
  cleanup: (() => Promise<void>)[],
  options: {
    openClient?: (database: PostgresDatabase) => pg.Client | Promise<pg.Client>
    listenVia?: string
    probeTimeoutMs?: number
  } = {},
): Promise<Instance> {
  const database = openPostgres(url, { poolSize: 2 })
  const log = memoryLog()
  const dedicated = database.dedicatedClient
  const bus = new PgEventBus({
    ...STATUS_CHANGES,
    db: database.db,
    openClient: options.openClient
      ? () => (options.openClient as (d: PostgresDatabase) => pg.Client)(database)
      : () => dedicated('listen'),
    log,
    retryMs: 20,
    maxRetryMs: 200,
    ...(options.listenVia !== undefined && { listenVia: options.listenVia }),
    ...(options.probeTimeoutMs !== undefined && { probeTimeoutMs: options.probeTimeoutMs }),
  })
  cleanup.push(async () => {
    await bus.close()
    await database.close()
  })
  await bus.start()
  return { database, bus, log }
}

/** Collects the changes a subscriber hears. */
function collect(bus: PgEventBus<StatusChange>, statusId: string): StatusChange[] {
  const heard: StatusChange[] = []
  bus.subscribe(statusId, (change) => heard.push(change))
  return heard
}

async function withDatabase(
  fn: (fresh: TestDatabase, cleanup: (() => Promise<void>)[]) => Promise<void>,
) {
  const fresh = await freshDatabase()
  const cleanup: (() => Promise<void>)[] = []
  try {
    await fn(fresh, cleanup)
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => {})
    await fresh.drop()
  }
}

/**
 * A started bus whose LISTEN connection works and whose NOTIFYs fail: the pool it publishes
 * through points at a closed port.
 */
async function busWhoseNotifyFails(fresh: TestDatabase, cleanup: (() => Promise<void>)[]) {
  const listening = openPostgres(fresh.url, { poolSize: 1 })
  const unreachable = openPostgres('postgres://statusd@127.0.0.1:1/nowhere', { poolSize: 1 })
  const log = memoryLog()
  const bus = new PgEventBus({
    ...STATUS_CHANGES,
    db: unreachable.db,
    openClient: () => listening.dedicatedClient('listen') as pg.Client,
    log,
  })
  cleanup.push(async () => {
    await bus.close()
    await unreachable.close()
    await listening.close()
  })
  await bus.start()
  return { bus, log }
}

describe('PgEventBus: LISTEN/NOTIFY between instances [postgres]', { skip: postgresOnly }, () => {
  it('a publish on one instance reaches the subscribers on both, exactly once each', async () => {
    await withDatabase(async (fresh, cleanup) => {
      const a = await instance(fresh.url, cleanup)
      const b = await instance(fresh.url, cleanup)
      assert.ok(a.bus.listening && b.bus.listening)
      assert.match(String(a.bus.channel), /^statusd:statusd_test_/, 'the channel names the schema')
      assert.equal(a.bus.channel, b.bus.channel)

      const onA = collect(a.bus, 'st_1')
      const onB = collect(b.bus, 'st_1')
      const otherOnB = collect(b.bus, 'st_2')
      await a.bus.publish({ statusId: 'st_1', version: 2, kind: 'status' })
      await b.bus.publish({ statusId: 'st_1', version: 3, kind: 'deleted' })
      await waitUntil(() => onA.length >= 2 && onB.length >= 2, 'both instances heard both')
      // a marker published last: once it is heard, anything duplicated would have been too
      const marker = collect(a.bus, 'marker')
      await b.bus.publish({ statusId: 'marker', version: 1, kind: 'access' })
      await waitUntil(() => marker.length === 1, 'the marker arrived')

      const expected = [
        { statusId: 'st_1', version: 2, kind: 'status' },
        { statusId: 'st_1', version: 3, kind: 'deleted' },
      ]
      assert.deepEqual(onA, expected, 'the publisher hears its own change once (NOTIFY only)')
      assert.deepEqual(onB, expected, 'the other instance hears both, in order')
      assert.deepEqual(otherOnB, [], 'subscribers of another status hear nothing')
    })
  })

  it('instances on another schema of the same database hear nothing (the channel is per schema)', async () => {
    await withDatabase(async (fresh, cleanup) => {
      const other = await freshDatabase()
      cleanup.push(() => other.drop())
      const a = await instance(fresh.url, cleanup)
      const elsewhere = await instance(other.url, cleanup)
      assert.notEqual(a.bus.channel, elsewhere.bus.channel)
      const heardElsewhere = collect(elsewhere.bus, 'st_1')
      const heardHere = collect(a.bus, 'st_1')
      await a.bus.publish({ statusId: 'st_1', version: 2, kind: 'status' })
      const marker = collect(elsewhere.bus, 'marker')
      await elsewhere.bus.publish({ statusId: 'marker', version: 1, kind: 'status' })
      await waitUntil(() => heardHere.length === 1 && marker.length === 1, 'both delivered')
      assert.deepEqual(heardElsewhere, [])
    })
  })

  // docs/postgres.md#behind-pgbouncer
  it('after LISTEN a NOTIFY through the pool comes back: no warning, and other instances pass over it quietly', async () => {
    await withDatabase(async (fresh, cleanup) => {
      const a = await instance(fresh.url, cleanup)
      const b = await instance(fresh.url, cleanup)
      await waitUntil(
        () => a.bus.heardItself !== undefined && b.bus.heardItself !== undefined,
        'both round trips ended',
      )
      assert.deepEqual([a.bus.heardItself, b.bus.heardItself], [true, true])
      for (const { log } of [a, b])
        assert.deepEqual(
          log.lines.filter((l) => l.level !== 'info'),
          [],
          'no warning: neither its own round trip nor the other instance’s',
        )
    })
  })

  it('a LISTEN connection that does not hear the pool’s NOTIFY is warned about, naming what to set', async () => {
    await withDatabase(async (fresh, cleanup) => {
      // the LISTEN connection on another schema than the pool's: its channel is another
      const other = await freshDatabase()
      cleanup.push(() => other.drop())
      const elsewhere = openPostgres(other.url, { poolSize: 1 })
      cleanup.push(() => elsewhere.close())
      const viaListenUrl = await instance(fresh.url, cleanup, {
        openClient: () => elsewhere.dedicatedClient('listen'),
        listenVia: 'DATABASE_LISTEN_URL',
        probeTimeoutMs: 200,
      })
      const viaUrl = await instance(fresh.url, cleanup, {
        openClient: () => elsewhere.dedicatedClient('listen'),
        probeTimeoutMs: 200,
      })
      await waitUntil(
        () => viaListenUrl.bus.heardItself === false && viaUrl.bus.heardItself === false,
        'both round trips timed out',
      )
      assert.ok(viaUrl.bus.listening, 'it listens on, as it was')
      const warnings = (i: Instance) => i.log.lines.filter((l) => l.level === 'warn')
      assert.equal(warnings(viaUrl).length, 1)
      assert.match(
        String(warnings(viaUrl)[0]?.msg),
        /did not reach this instance's LISTEN connection \(DATABASE_URL\) within 200 ms: .*set DATABASE_LISTEN_URL to a direct connection to PostgreSQL/,
      )
      assert.equal(warnings(viaListenUrl).length, 1)
      assert.match(
        String(warnings(viaListenUrl)[0]?.msg),
        /DATABASE_LISTEN_URL must reach PostgreSQL directly .*same database and schema/,
      )
    })
  })

  it('a notification that is not a change is logged and ignored; the next one arrives', async () => {
    await withDatabase(async (fresh, cleanup) => {
      const a = await instance(fresh.url, cleanup)
      const heard = collect(a.bus, 'st_1')
      for (const junk of ['not json', '{"statusId":"st_1","version":"2","kind":"status"}', '{}'])
        await sql`select pg_notify(${a.bus.channel}, ${junk})`.execute(a.database.db)
      await a.bus.publish({ statusId: 'st_1', version: 2, kind: 'status' })
      await waitUntil(() => heard.length === 1, 'the real change arrived')
      assert.deepEqual(heard, [{ statusId: 'st_1', version: 2, kind: 'status' }])
      assert.equal(
        a.log.lines.filter((l) => l.msg.includes('not a change')).length,
        3,
        'each junk payload was logged',
      )
    })
  })

  it('changes published together, or while a NOTIFY is on its way, share one statement; every instance hears each once, in order', async () => {
    await withDatabase(async (fresh, cleanup) => {
      const a = await instance(fresh.url, cleanup)
      const b = await instance(fresh.url, cleanup)
      // the NOTIFY statements A's bus runs: each statement it runs on the pool comes back
      // through a plugin's transformResult
      let statements = 0
      const counted = a.database.db.withPlugin({
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          statements += 1
          return args.result
        },
      })
      const bus = new PgEventBus({
        ...STATUS_CHANGES,
        db: counted,
        openClient: () => a.database.dedicatedClient('listen-counted'),
      })
      cleanup.push(() => bus.close())
      await bus.start()
      await waitUntil(() => bus.heardItself === true, 'the round trip after LISTEN came back')
      statements = 0
      const onBus = collect(bus, 'st_1')
      const onB = collect(b.bus, 'st_1')
      const change = (version: number): StatusChange => ({
        statusId: 'st_1',
        version,
        kind: 'status',
      })

      // 40 writes that commit in one turn of the event loop: one NOTIFY statement
      await Promise.all(Array.from({ length: 40 }, (_, i) => bus.publish(change(i + 1))))
      assert.equal(statements, 1, '40 changes of one turn, one statement')
      // one change goes out; 20 published while its statement is on its way go in the next
      const first = bus.publish(change(41))
      await new Promise(setImmediate) // its statement has left the queue
      const more = Array.from({ length: 20 }, (_, i) => bus.publish(change(42 + i)))
      await Promise.all([first, ...more])
      assert.equal(statements, 3, 'one for the first, one for the 20 that waited')

      const all = Array.from({ length: 61 }, (_, i) => change(i + 1))
      await waitUntil(() => onBus.length >= 61 && onB.length >= 61, 'both heard all 61')
      const marker = collect(bus, 'marker')
      await b.bus.publish({ statusId: 'marker', version: 1, kind: 'access' })
      await waitUntil(() => marker.length === 1, 'the marker arrived')
      assert.deepEqual(onBus, all, 'the publisher hears each change once, in order')
      assert.deepEqual(onB, all, 'the other instance hears each change once, in order')
    })
  })

  it('a NOTIFY statement that fails resolves every publish it carried and tells the local subscribers of each', async () => {
    await withDatabase(async (fresh, cleanup) => {
      const { bus, log } = await busWhoseNotifyFails(fresh, cleanup)
      const heard = collect(bus, 'st_1')
      const changes = Array.from(
        { length: 5 },
        (_, i): StatusChange => ({ statusId: 'st_1', version: i + 1, kind: 'status' }),
      )
      await Promise.all(changes.map((change) => bus.publish(change)))
      assert.deepEqual(heard, changes)
      assert.equal(
        log.lines.filter((l) => l.level === 'warn' && l.msg.includes('NOTIFY failed')).length,
        1,
        'one statement carried the five, and its failure is logged once',
      )
    })
  })

  it('publish never throws: when NOTIFY fails it logs and still tells its own subscribers', async () => {
    await withDatabase(async (fresh, cleanup) => {
      const { bus, log } = await busWhoseNotifyFails(fresh, cleanup)
      const heard = collect(bus, 'st_1')
      await bus.publish({ statusId: 'st_1', version: 2, kind: 'status' })
      assert.deepEqual(heard, [{ statusId: 'st_1', version: 2, kind: 'status' }])
      assert.ok(log.lines.some((l) => l.level === 'warn' && l.msg.includes('NOTIFY failed')))
    })
  })

  it('the LISTEN connection is terminated: it reconnects by itself, resyncs, and delivers again', async () => {
    await withDatabase(async (fresh, cleanup) => {
      const a = await instance(fresh.url, cleanup)
      const b = await instance(fresh.url, cleanup)
      let resyncs = 0
      a.bus.onResync(() => {
        resyncs += 1
      })
      const heard = collect(a.bus, 'st_1')
      const before = a.bus.listenerPid
      assert.ok(before)
      const { rows } = await sql<{
        done: boolean
      }>`select pg_terminate_backend(${before}) as done`.execute(b.database.db)
      assert.equal(rows[0]?.done, true)

      await waitUntil(() => a.bus.connects === 2, 'the bus reconnected')
      assert.equal(resyncs, 1, 'one resync after the reconnect (changes in the gap were lost)')
      assert.notEqual(a.bus.listenerPid, before, 'a new connection')
      assert.ok(a.log.lines.some((l) => l.msg.includes('LISTEN connection lost')))

      await b.bus.publish({ statusId: 'st_1', version: 5, kind: 'status' })
      await waitUntil(() => heard.length === 1, 'a change after the reconnect is delivered')
      assert.deepEqual(heard, [{ statusId: 'st_1', version: 5, kind: 'status' }])
    })
  })

  it('while it cannot reconnect it keeps trying; the resync comes once it is back', async () => {
    await withDatabase(async (fresh, cleanup) => {
      // the reconnects of A wait at a gate the test opens: a gap of a known length
      let gate: Promise<void> = Promise.resolve()
      let open = () => {}
      let attempts = 0
      const a = await instance(fresh.url, cleanup, {
        openClient: async (database) => {
          attempts += 1
          await gate
          const client = database.dedicatedClient('listen') as pg.Client
          return client
        },
      })
      const b = await instance(fresh.url, cleanup)
      let resyncs = 0
      a.bus.onResync(() => {
        resyncs += 1
      })
      const heard = collect(a.bus, 'st_1')
      gate = new Promise((resolve) => {
        open = resolve
      })
      await sql`select pg_terminate_backend(${a.bus.listenerPid})`.execute(b.database.db)
      await waitUntil(() => !a.bus.listening && attempts === 2, 'A noticed and is reconnecting')

      // published in the gap: A is not listening, so this one is lost for A
      await b.bus.publish({ statusId: 'st_1', version: 2, kind: 'status' })
      assert.equal(resyncs, 0)
      open()
      await waitUntil(() => resyncs === 1, 'the resync after the reconnect')
      assert.ok(a.bus.listening)

      await b.bus.publish({ statusId: 'st_1', version: 3, kind: 'status' })
      await waitUntil(() => heard.some((c) => c.version === 3), 'delivered after the gap')
      assert.deepEqual(
        heard.map((c) => c.version),
        [3],
        'the change in the gap was not delivered: the resync is what covers it',
      )
    })
  })

  it('a first connection that fails is retried in the background; then a resync', async () => {
    await withDatabase(async (fresh, cleanup) => {
      let attempts = 0
      const a = await instance(fresh.url, cleanup, {
        openClient: (database) => {
          attempts += 1
          if (attempts < 3)
            throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
          return database.dedicatedClient('listen') as pg.Client
        },
      })
      let resyncs = 0
      a.bus.onResync(() => {
        resyncs += 1
      })
      assert.equal(a.bus.listening, false, 'start() resolved after a failed first attempt')
      await waitUntil(() => a.bus.listening, 'connected on a later attempt')
      assert.equal(attempts, 3)
      assert.equal(resyncs, 1, 'streams opened meanwhile may have missed changes: resync')
      assert.equal(a.log.lines.filter((l) => l.msg.includes('retrying')).length, 2)
    })
  })

  it('a LISTEN connection that stops answering is noticed by its probe and replaced', async () => {
    await withDatabase(async (fresh, cleanup) => {
      // the first connection goes silent (its probes never answer), like one behind a
      // firewall that dropped it without telling anyone
      let opened = 0
      const database = openPostgres(fresh.url, { poolSize: 1 })
      const log = memoryLog()
      const bus = new PgEventBus({
        ...STATUS_CHANGES,
        db: database.db,
        openClient: () => {
          opened += 1
          const client = database.dedicatedClient('listen') as pg.Client
          if (opened === 1) {
            const query = client.query.bind(client) as (...args: unknown[]) => unknown
            Object.assign(client, {
              query: (...args: unknown[]) =>
                args[0] === 'select 1' ? new Promise(() => {}) : query(...args),
            })
          }
          return client
        },
        log,
        checkIntervalMs: 30,
        // note: the same timeout judges the healthy connection that replaces the silent one: on
        // a loaded machine a probe may take well over 30 ms, and a dropped replacement would
        // be replaced again (more connects, resyncs, and a change lost in the gap)
        checkTimeoutMs: 2_000,
      })
      cleanup.push(async () => {
        await bus.close()
        await database.close()
      })
      let resyncs = 0
      bus.onResync(() => {
        resyncs += 1
      })
      await bus.start()
      await waitUntil(() => bus.connects === 2, 'a second connection replaced the silent one')
      assert.equal(resyncs, 1)
      assert.ok(log.lines.some((l) => l.msg.includes('LISTEN connection lost')))
      const heard = collect(bus, 'st_1')
      await bus.publish({ statusId: 'st_1', version: 2, kind: 'status' })
      await waitUntil(() => heard.length === 1, 'delivered on the new connection')
    })
  })

  it('close() releases the LISTEN connection and stops delivering', async () => {
    await withDatabase(async (fresh, cleanup) => {
      const a = await instance(fresh.url, cleanup)
      const b = await instance(fresh.url, cleanup)
      const pid = a.bus.listenerPid
      const heard = collect(a.bus, 'st_1')
      await a.bus.close()
      assert.equal(a.bus.listening, false)
      await b.bus.publish({ statusId: 'st_1', version: 2, kind: 'status' })
      let gone = false
      for (let i = 0; i < 200 && !gone; i++) {
        const { rows } = await sql<{
          n: number
        }>`select count(*)::int as n from pg_stat_activity where pid = ${pid}`.execute(
          b.database.db,
        )
        gone = rows[0]?.n === 0
        if (!gone) await new Promise((r) => setTimeout(r, 25))
      }
      assert.ok(gone, 'the server has no session with that pid any more')
      assert.deepEqual(heard, [])
      await a.bus.publish({ statusId: 'st_1', version: 3, kind: 'status' }) // closed: a no-op
    })
  })
})

describe('parseStatusChange: NOTIFY payloads', () => {
  it('reads a change back and rejects anything else', () => {
    const change = { statusId: 'st_1', version: 7, kind: 'access' } as const
    assert.deepEqual(parseStatusChange(JSON.stringify(change)), change)
    assert.deepEqual(
      parseStatusChange(JSON.stringify({ ...change, extra: 1 })),
      change,
      'extra fields dropped',
    )
    for (const bad of [
      undefined,
      '',
      'x',
      'null',
      '[]',
      '{"statusId":1,"version":1,"kind":"status"}',
      '{"statusId":"a","version":1.5,"kind":"status"}',
      '{"statusId":"a","version":1,"kind":"other"}',
    ])
      assert.equal(parseStatusChange(bad), undefined, String(bad))
  })

  it('a change stays far below the 8000-byte NOTIFY payload limit', () => {
    const change: StatusChange = {
      statusId: 'x'.repeat(21),
      version: Number.MAX_SAFE_INTEGER,
      kind: 'deleted',
    }
    assert.ok(Buffer.byteLength(JSON.stringify(change)) < 100)
  })
})
