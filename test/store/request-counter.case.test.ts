import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import pg from 'pg'
import { pgRequestCounter } from '../../src/db/postgres/pg-request-counter.ts'
import { OtherCommits } from '../../src/db/sqlite/other-commits.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { onEngine, useStore } from '../helpers/store.ts'

// docs/api.md#rate-limits: on PostgreSQL the per-user count is in the database, one for every
// instance; on SQLite one process serves, and counts in memory.
describe(onEngine('request counter'), () => {
  const store = useStore()
  const MINUTE = 60_000

  it('SQLite has none: its one process counts in memory', {
    skip: TEST_ENGINE !== 'sqlite',
  }, () => {
    assert.equal(store().database.requestCounter, null)
  })

  describe('in PostgreSQL', { skip: TEST_ENGINE !== 'postgres' }, () => {
    const counter = () => {
      const c = store().database.requestCounter
      assert.ok(c, 'PostgreSQL shares a counter')
      return c
    }

    it('counts each key on its own, within the window, with the time left', async () => {
      const first = await counter().hit('k1', MINUTE)
      assert.equal(first.count, 1)
      assert.ok(first.ttlMs > 0 && first.ttlMs <= MINUTE, `ttl ${first.ttlMs}`)
      assert.equal((await counter().hit('k1', MINUTE)).count, 2)
      const third = await counter().hit('k1', MINUTE)
      assert.equal(third.count, 3)
      assert.ok(third.ttlMs <= first.ttlMs, 'the window does not move')
      assert.equal((await counter().hit('k2', MINUTE)).count, 1)
    })

    it('starts a new window, from 1, once the last one ended', async () => {
      for (let i = 0; i < 3; i++) await counter().hit('k3', MINUTE)
      // the window ended (moved into the past rather than waited for)
      await sql`update rate_limit_counters set window_ends = now() - interval '1 second'
        where key = 'k3'`.execute(store().db)
      const next = await counter().hit('k3', MINUTE)
      assert.equal(next.count, 1)
      assert.ok(next.ttlMs > MINUTE - 5_000, `a whole new window, ttl ${next.ttlMs}`)
    })

    it('concurrent hits are each counted once: 1 to n, no count lost or repeated', async () => {
      const n = 40
      const counts = (
        await Promise.all(Array.from({ length: n }, () => counter().hit('k4', MINUTE)))
      )
        .map((r) => r.count)
        .sort((x, y) => x - y)
      assert.deepEqual(
        counts,
        Array.from({ length: n }, (_, i) => i + 1),
      )
    })

    // docs/postgres.md#scaling-out-behind-a-load-balancer: a busy user's hits share round trips
    describe('hits of a key that come while its statement is on its way', () => {
      // a counter on its own pool, whose statements are counted (and the first failed, if asked)
      const counted = (t: { after(fn: () => Promise<void>): void }, failFirst = false) => {
        const pool = new pg.Pool({ connectionString: store().url, max: 4 })
        t.after(() => pool.end())
        const seen = { statements: 0 }
        const query = ((config: pg.QueryConfig) => {
          seen.statements++
          if (failFirst && seen.statements === 1)
            return Promise.reject(new Error('connection lost'))
          return pool.query(config)
        }) as pg.Pool['query']
        return { counter: pgRequestCounter({ query }), seen }
      }

      it('are counted together by the next statement, each with a count of its own', async (t) => {
        const { counter: c, seen } = counted(t)
        const [a, b] = await Promise.all([
          Promise.all(Array.from({ length: 30 }, () => c.hit('k5', MINUTE))),
          Promise.all(Array.from({ length: 5 }, () => c.hit('k6', MINUTE))),
        ])
        const sorted = (rs: { count: number }[]) => rs.map((r) => r.count).sort((x, y) => x - y)
        assert.deepEqual(
          sorted(a),
          Array.from({ length: 30 }, (_, i) => i + 1),
        )
        assert.deepEqual(sorted(b), [1, 2, 3, 4, 5])
        // per key: the first hit alone, then the ones that waited for it together
        assert.equal(seen.statements, 4)
        assert.equal((await c.hit('k5', MINUTE)).count, 31, 'the database holds every hit')
        assert.equal(seen.statements, 5)
      })

      it('a statement that fails fails its hits only: the ones that waited are counted next', async (t) => {
        const { counter: c, seen } = counted(t, true)
        const results = await Promise.allSettled(
          Array.from({ length: 4 }, () => c.hit('k7', MINUTE)),
        )
        assert.equal(results[0]?.status, 'rejected')
        assert.deepEqual(
          results.slice(1).map((r) => (r.status === 'fulfilled' ? r.value.count : r.reason)),
          [1, 2, 3],
        )
        assert.equal(seen.statements, 2)
      })
    })
  })
})

// docs/api.md#authentication: a SQLite server notices the CLI's commits by `PRAGMA data_version`
describe('commits of other processes on SQLite', { skip: TEST_ENGINE !== 'sqlite' }, () => {
  it("another connection's commit is noticed, the watcher's own connection's commits are not", (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-other-commits-'))
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
    const file = path.join(dir, 'db.sqlite')
    const own = new SQLite(file)
    const other = new SQLite(file)
    t.after(() => {
      own.close()
      other.close()
    })
    own.pragma('journal_mode = WAL')
    own.exec('create table t (x)')
    const watch = new OtherCommits(own)
    let noticed = 0
    const stop = watch.listen(() => noticed++)
    t.after(stop)

    own.exec('insert into t values (1)')
    watch.check()
    assert.equal(noticed, 0, 'its own commit')
    other.exec('insert into t values (2)')
    watch.check()
    assert.equal(noticed, 1, "another process's commit")
    watch.check()
    assert.equal(noticed, 1, 'once')
    other.pragma('wal_checkpoint(PASSIVE)')
    watch.check()
    assert.equal(noticed, 1, 'a checkpoint (the checkpoint thread) is not a change')
  })
})
