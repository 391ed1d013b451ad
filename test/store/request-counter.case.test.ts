import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
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
