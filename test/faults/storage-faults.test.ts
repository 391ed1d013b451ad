import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { defer, type Lifetime } from '../helpers/cleanup.ts'

// Storage faults on SQLite, provoked for real: the write lock held by another connection
// (SQLITE_BUSY), a full disk (a tiny tmpfs; and SQLite's own size limit), a read-only
// database (the files made immutable; and a read-only connection). Each must answer a
// clean 503 `unavailable` with Retry-After — never a 500 —, leave the data exactly as it was
// and intact (`PRAGMA integrity_check`), keep reads working where the fault allows, and
// recover without a restart once the fault is gone.

let dir: string
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-faults-'))
})
after(() => fs.rmSync(dir, { recursive: true, force: true }))

/** Every row of every table (tables added later included), read through a connection of its own. */
function snapshot(file: string): Record<string, unknown[]> {
  const db = new SQLite(file, { readonly: true })
  try {
    const tables = db
      .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
      .all() as { name: string }[]
    return Object.fromEntries(
      tables.map(({ name }) => [
        name,
        db
          .prepare(`select * from "${name}"`)
          .all()
          .map((r) => JSON.stringify(r))
          .sort(),
      ]),
    )
  } finally {
    db.close()
  }
}

function integrity(file: string): string {
  const db = new SQLite(file, { readonly: true })
  try {
    return db.pragma('integrity_check', { simple: true }) as string
  } finally {
    db.close()
  }
}

/** Runs a shell tool; false when it is not there or not permitted (the test then skips). */
function tryRun(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

interface Fixture {
  t: TestApp
  owner: TestUser
  file: string
  statusId: string
}

async function fixture(ctx: Lifetime, file: string, busyTimeoutMs?: number): Promise<Fixture> {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const t = await makeApp(ctx, {
    databaseUrl: `sqlite:${file}`,
    ...(busyTimeoutMs !== undefined && { busyTimeoutMs }),
  })
  const owner = await t.user()
  const created = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'FREE' })
  assert.equal(created.statusCode, 201)
  return { t, owner, file, statusId: created.json().id }
}

/** Every kind of write the API has, each of which must fail cleanly under the fault. */
const writes = (f: Fixture, n: number) => [
  () => f.t.request(f.owner, 'POST', '/v1/status-keys/room-4', { value: `v${n}` }),
  () => f.t.request(f.owner, 'POST', `/v1/status-keys/new-${n}`, { description: 'x'.repeat(400) }),
  () => f.t.request(f.owner, 'PATCH', `/v1/status/${f.statusId}`, { colorNo: 2 }),
  () =>
    f.t.request(
      f.owner,
      'PATCH',
      `/v1/status/${f.statusId}`,
      { value: `i${n}` },
      {
        'idempotency-key': `fault-${n}`,
      },
    ),
  () => f.t.request(f.owner, 'POST', '/v1/user/api-keys', { label: 'during fault' }),
]

/**
 * A description of 400 characters of 4 bytes each: 1 600 bytes, more than a page of a
 * WITHOUT ROWID table (statuses) keeps in place (about 1 000 bytes), so a status created with
 * it always needs a new overflow page, wherever its id lands in the table.
 */
const PAGE_SPILLING_DESCRIPTION = '\u{1F7E2}'.repeat(400)

/**
 * Writes that need a new page. note: SQLite's size limit counts pages of the database file,
 * so an update that fits in its page (and goes to the WAL) still succeeds under it; a real
 * full disk stops those too (the WAL cannot grow).
 */
const growingWrites = (f: Fixture, n: number) => [
  () =>
    f.t.request(f.owner, 'POST', `/v1/status-keys/grow-${n}`, {
      description: PAGE_SPILLING_DESCRIPTION,
    }),
  () =>
    f.t.request(
      f.owner,
      'POST',
      `/v1/status-keys/grow-${n}-b`,
      { description: PAGE_SPILLING_DESCRIPTION },
      {
        'idempotency-key': `grow-${n}`,
      },
    ),
]

/** Asserts a response is a 503 unavailable (docs/api.md#errors). */
function assertUnavailable(res: Awaited<ReturnType<TestApp['request']>>, what: string): void {
  assert.equal(res.statusCode, 503, `${what}: ${res.body}`)
  const body = res.json()
  assert.equal(body.errorCode, 'unavailable')
  assert.equal(typeof body.message, 'string')
  assert.equal(typeof body.requestId, 'string')
  assert.ok(res.headers['retry-after'], 'a 503 says when to retry')
  assert.doesNotMatch(res.body, /SQLITE|sqlite|disk|readonly|locked/i, 'no storage detail leaks')
}

/**
 * Under the fault every write answers 503 and changes nothing; reads still work when
 * `readsWork`; after `heal()` the same writes succeed, without a restart.
 */
async function provoke(
  f: Fixture,
  fault: { start: () => void | Promise<void>; heal: () => void | Promise<void> },
  options: { readsWork?: boolean; writes?: typeof writes } = {},
): Promise<void> {
  const { readsWork = true } = options
  await fault.start()
  const before = snapshot(f.file)
  try {
    let n = 0
    for (const write of (options.writes ?? writes)(f, n++))
      assertUnavailable(await write(), 'a write under the fault')
    if (readsWork) {
      const read = await f.t.request(f.owner, 'GET', `/v1/status/${f.statusId}`)
      assert.equal(read.statusCode, 200, 'reads go on during the fault')
      assert.equal(read.json().value, 'FREE')
    }
  } finally {
    await fault.heal()
  }
  assert.deepEqual(snapshot(f.file), before, 'the failed writes left nothing behind')
  assert.equal(integrity(f.file), 'ok')
  // recovery: the same connection, no restart
  const again = await f.t.request(f.owner, 'POST', '/v1/status-keys/room-4', { value: 'BACK' })
  assert.equal(again.statusCode, 200, again.body)
  assert.equal(again.json().changeCount, 2, 'counted once: nothing of the failed writes stayed')
  const after = await f.t.request(f.owner, 'GET', `/v1/status/${f.statusId}`)
  assert.equal(after.json().value, 'BACK')
  const created = await f.t.request(f.owner, 'POST', '/v1/status-keys/after-fault', {
    value: 'NEW',
  })
  assert.equal(created.statusCode, 201, created.body)
  const replay = await f.t.request(
    f.owner,
    'PATCH',
    `/v1/status/${f.statusId}`,
    { value: 'i0' },
    {
      'idempotency-key': 'fault-0',
    },
  )
  assert.equal(replay.statusCode, 200, 'an idempotency key used during the fault is free')
  assert.equal(replay.headers['idempotent-replayed'], undefined)
  assert.equal(integrity(f.file), 'ok')
}

describe('storage unavailable: another connection holds the write lock (SQLITE_BUSY)', () => {
  it('writes answer 503 once the busy timeout passes; reads go on; the lock gone, writes work', async (t) => {
    // note: a short wait for the lock (SQLITE_BUSY_TIMEOUT_MS), so the test does not sit
    // through the default
    const f = await fixture(t, path.join(dir, 'busy', 'statusd.db'), 20)
    const other = new SQLite(f.file)
    defer(t, () => other.close())
    await provoke(f, {
      start: () => {
        other.exec('BEGIN IMMEDIATE')
      },
      heal: () => {
        other.exec('ROLLBACK')
      },
    })
    const ready = await f.t.app.inject({ method: 'GET', url: '/readyz' })
    assert.equal(ready.statusCode, 200)
  })
})

describe('full disk', () => {
  it("SQLite's size limit reached (PRAGMA max_page_count): 503, then writes work once raised", async (t) => {
    const f = await fixture(t, path.join(dir, 'max-pages', 'statusd.db'))
    const pages = async () =>
      Number(
        (
          (await sql<{ page_count: number }>`pragma page_count`.execute(f.t.database.db))
            .rows[0] as { page_count: number }
        ).page_count,
      )
    await provoke(
      f,
      {
        start: async () => {
          // the file may not grow by a single page
          await sql.raw(`pragma max_page_count = ${await pages()}`).execute(f.t.database.db)
          // use up the free pages left inside the file, so every write below needs a page
          for (let i = 0; i < 200; i++) {
            const res = await f.t.request(f.owner, 'POST', `/v1/status-keys/fill-${i}`, {
              description: PAGE_SPILLING_DESCRIPTION,
            })
            if (res.statusCode === 503) break
            assert.equal(res.statusCode, 201, res.body)
          }
        },
        heal: async () => {
          await sql`pragma max_page_count = 1073741823`.execute(f.t.database.db)
        },
      },
      { writes: growingWrites },
    )
  })

  const mountPoint = path.join(os.tmpdir(), `statusd-faults-tmpfs-${process.pid}`)
  let mounted = false
  before(() => {
    fs.mkdirSync(mountPoint, { recursive: true })
    // note: 2 MiB: the schema alone (every table and index of the migrations) takes most of 1 MiB
    mounted = tryRun('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint])
  })
  after(() => {
    if (mounted) tryRun('umount', ['-l', mountPoint])
    fs.rmSync(mountPoint, { recursive: true, force: true })
  })

  it('a real full filesystem (a 2 MiB tmpfs): 2xx or 503, never 500; what was acknowledged is there, nothing else; it recovers once there is room', async (t) => {
    if (!mounted) return t.skip('mounting a tmpfs needs root (CAP_SYS_ADMIN); not available here')
    const f = await fixture(t, path.join(mountPoint, 'statusd.db'))
    // note: SQLite reuses WAL space it has already taken, so on a full disk a small write can
    // still land where a larger one failed: each write either lands (2xx) or fails cleanly
    const landed: string[] = []
    const refused: string[] = []
    for (let i = 0; i < 6000 && refused.length < 20; i++) {
      const key = `disk-${i}`
      const res = await f.t.request(f.owner, 'POST', `/v1/status-keys/${key}`, {
        value: `d${i}`,
        description: 'f'.repeat(i % 2 === 0 ? 400 : 10),
      })
      if (res.statusCode === 201) landed.push(key)
      else {
        assertUnavailable(res, `write ${key} on a full disk`)
        refused.push(key)
      }
    }
    assert.ok(refused.length > 0, 'the filesystem filled up')
    // updates and key creation on the full disk: clean either way too
    for (const write of writes(f, 9999)) {
      const res = await write()
      if (res.statusCode >= 300) assertUnavailable(res, 'a write on a full disk')
    }
    assert.ok(tryRun('mount', ['-o', 'remount,size=16m', mountPoint]), 'the tmpfs grows')
    assert.equal(integrity(f.file), 'ok')
    const stored = new Set(
      (snapshot(f.file).statuses as string[]).map((r) => JSON.parse(r).status_key as string),
    )
    for (const key of landed) assert.ok(stored.has(key), `acknowledged ${key} is stored`)
    for (const key of refused) assert.ok(!stored.has(key), `refused ${key} left nothing`)
    // recovery without a restart
    for (const key of refused.slice(0, 5)) {
      const res = await f.t.request(f.owner, 'POST', `/v1/status-keys/${key}`, { value: 'LATE' })
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(res.json().changeCount, 1)
    }
    assert.equal(integrity(f.file), 'ok')
  })
})

describe('read-only database', () => {
  it('a read-only connection (PRAGMA query_only): 503, then writes work once lifted', async (t) => {
    const f = await fixture(t, path.join(dir, 'query-only', 'statusd.db'))
    await provoke(f, {
      start: async () => {
        await sql`pragma query_only = on`.execute(f.t.database.db)
      },
      heal: async () => {
        await sql`pragma query_only = off`.execute(f.t.database.db)
      },
    })
  })

  it('the database files made immutable (chattr +i, which stops root too): 503, then writes work', async (t) => {
    const f = await fixture(t, path.join(dir, 'immutable', 'statusd.db'))
    // note: not the -shm file: SQLite maps it into memory, and a write there would fault
    const files = [f.file, `${f.file}-wal`]
    // made mutable again before the app closes (a later registration runs first)
    defer(t, () => tryRun('chattr', ['-i', ...files]))
    if (!files.every((file) => fs.existsSync(file)) || !tryRun('chattr', ['+i', f.file]))
      return t.skip('chattr +i is not supported here (needs root and ext2/3/4, xfs, btrfs)')
    tryRun('chattr', ['-i', f.file])
    await provoke(f, {
      start: () => {
        assert.ok(tryRun('chattr', ['+i', ...files]))
      },
      heal: () => {
        assert.ok(tryRun('chattr', ['-i', ...files]))
      },
    })
  })
})

describe('SQLite checkpoints', () => {
  it('a checkpoint that fails is reported (the server logs it), never lost silently', async (t) => {
    const file = path.join(dir, 'checkpoint', 'statusd.db')
    const errors: Error[] = []
    const database = createDatabase(`sqlite:${file}`, {
      checkpoints: { onError: (err) => errors.push(err) },
    })
    defer(t, () => database.close())
    defer(t, () => tryRun('chattr', ['-i', file]))
    await database.writer.run(async (tx) => {
      await sql`create table probe (x integer)`.execute(tx)
      await sql`insert into probe values (1)`.execute(tx)
    })
    if (!tryRun('chattr', ['+i', file]))
      return t.skip('chattr +i is not supported here (needs root and ext2/3/4, xfs, btrfs)')
    // the write's log is copied into the database file a second after the last write:
    // the immutable file refuses it
    const deadline = Date.now() + 15_000
    while (errors.length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50))
    assert.match(String(errors[0]?.message), /checkpoint failed/)
  })
})
