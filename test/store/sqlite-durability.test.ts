import assert from 'node:assert/strict'
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { startCheckpointThread } from '../../src/db/sqlite/checkpoint-worker.ts'
import { sqliteDurability } from '../../src/db/sqlite/sqlite-durability.ts'
import { walSyncer } from '../../src/db/sqlite/wal-sync.ts'
import { bounded } from '../helpers/bounded.ts'
import { ROOT, runToEnd, statusdEnv } from '../helpers/processes.ts'
import { seeded } from '../helpers/seed.ts'

// Issue 5 (durable group commit): a group-committed batch is acknowledged after an fsync of
// the log done off the event loop, and checkpoints run on their own thread.

const dir = mkdtempSync(join(tmpdir(), 'statusd-durability-'))
after(() => rmSync(dir, { recursive: true, force: true }))

test('durability: many concurrent calls of the log sync all resolve, and share syncs', async () => {
  const file = join(dir, 'sync.log')
  writeFileSync(file, 'x')
  const { sync, close } = walSyncer(file)
  const first = sync()
  const waiters = Array.from({ length: 10 }, () => sync())
  assert.equal(new Set(waiters).size, 1, 'calls during a sync share the next one')
  assert.notEqual(waiters[0], first, 'never the running one')
  await Promise.all([first, ...waiters])
  await close()
})

test('durability: a log that cannot be synced fails the sync with the cause', async () => {
  const { sync } = walSyncer(join(dir, 'missing-wal'))
  await assert.rejects(sync(), { code: 'ENOENT' })
})

test('durability: checkpoints happen off the main connection, and the log ends with a clean close', async () => {
  const file = join(dir, 'checkpoint.db')
  const database = createDatabase(`sqlite:${file}`)
  await migrateToLatest(database.db)
  const rows = (
    await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db)
  ).rows
  assert.equal(rows[0]?.wal_autocheckpoint, 0, 'the main connection never checkpoints by itself')
  const now = '2026-01-01T00:00:00.000Z'
  await Promise.all(
    Array.from({ length: 600 }, (_, i) =>
      database.writer.run((tx) =>
        tx
          .insertInto('users')
          .values({
            id: `u${i}`,
            name: `u${i}`,
            email: null,
            plan: 'free',
            verified: 1,
            created_at: now,
          })
          .execute(),
      ),
    ),
  )
  // the database file alone (without its log) holds the rows once the checkpoint thread ran
  const inFile = () => {
    const copy = join(dir, `copy-${Date.now()}.db`)
    copyFileSync(file, copy)
    const db = new SQLite(copy, { readonly: true })
    try {
      return (db.prepare('select count(*) as n from users').get() as { n: number }).n
    } catch {
      return 0 // the schema itself may not be checkpointed yet
    } finally {
      db.close()
    }
  }
  const deadline = Date.now() + 10_000
  while (inFile() < 600 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  assert.equal(inFile(), 600)
  await database.close()
  assert.equal(existsSync(`${file}-wal`), false, 'a clean close leaves no log behind')
})

test('durability: the checkpoint thread copies the log into the database file', async () => {
  const file = join(dir, 'thread.db')
  const writer = new SQLite(file)
  writer.pragma('journal_mode = WAL')
  writer.pragma('wal_autocheckpoint = 0')
  writer.exec('create table t (x integer)')
  writer.prepare('insert into t values (?)').run(1)
  const thread = startCheckpointThread(file)
  try {
    const result = await new Promise<{ ok: boolean; log: number; checkpointed: number }>(
      (resolve, reject) => {
        thread.once('message', resolve)
        thread.once('error', reject)
        thread.postMessage('checkpoint')
      },
    )
    assert.equal(result.ok, true)
    assert.ok(result.log > 0, 'the log had frames')
    assert.equal(result.checkpointed, result.log, 'all of them copied')
  } finally {
    thread.postMessage('close')
    await new Promise((resolve) => thread.once('exit', resolve))
    writer.close()
  }
})

test('durability: under writes that never pause, the log restarts instead of growing without end', async (t) => {
  const file = join(dir, 'restart.db')
  // one row per page, so that every write dirties a page of its own and logs a frame
  const setup = new SQLite(file)
  setup.pragma('journal_mode = WAL')
  setup.exec(`create table pages (id integer primary key, body blob not null);
    with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000)
    insert into pages select i, randomblob(3000) from n`)
  setup.close() // checkpoints, and removes the log
  const restartFrames = 256 // 1 MiB of 4 KiB pages
  const database = createDatabase(`sqlite:${file}`, {
    checkpoints: { checkpointEvery: 32, restartFrames },
  })
  // 32 clients, each writing as soon as its last write is durable: a batch is always under
  // way, so the checkpoints (every 32 writes) always overlap one
  let left = 6000
  const pages = seeded(t)
  const client = async () => {
    while (left-- > 0) {
      const id = pages.int(1, 2001)
      await database.writer.run((tx) =>
        sql`update pages set body = randomblob(3000) where id = ${id}`.execute(tx),
      )
    }
  }
  await Promise.all(Array.from({ length: 32 }, client))
  const walBytes = statSync(`${file}-wal`).size
  await database.close()
  // 6000 writes logged about 6000 frames (24 MiB); a log that restarts stays within a few
  // times its limit: how many depends on how far the checkpoint thread falls behind the
  // writes on a busy host (4.2 MiB seen on a loaded 2-core machine), so the bound is a third
  // of what a log that never restarts reaches
  assert.ok(
    walBytes < 8 * restartFrames * 4096,
    `the log is ${(walBytes / 2 ** 20).toFixed(1)} MiB, past 8 × its restart size`,
  )
})

test('durability: closing ends even when the checkpoint thread has died (it could not open the file)', async () => {
  const gone = mkdtempSync(join(tmpdir(), 'statusd-durability-gone-'))
  rmSync(gone, { recursive: true })
  const failed = Promise.withResolvers<Error>()
  const durability = sqliteDurability(join(gone, 'missing.db'), {
    checkpointEvery: 1,
    onError: failed.resolve,
  })
  // the thread, as it starts (process 'worker'), and its end
  const ended = new Promise<void>((resolve) =>
    process.once('worker', (thread) => thread.once('exit', () => resolve())),
  )
  // one unit committed (its log sync fails: there is no log), then a batch asks for a checkpoint
  await durability.afterCommit?.(1)?.catch(() => {})
  await durability.beforeBatch?.(undefined as never)
  await bounded('the checkpoint thread to fail', failed.promise)
  await bounded('the failed checkpoint thread to end', ended)
  // closing after the thread's end must not wait for another
  await bounded(
    'the durability of a database whose checkpoint thread died to close',
    durability.close(),
  )
})

test('durability: closing ends in a process with nothing else to do while the checkpoint thread stops', async (t) => {
  // a program whose last work is closing the database (a script, a CLI command): while the
  // close waits for the checkpoint thread to end, that wait alone must keep the process alive
  const file = join(dir, 'last-work.db')
  const program = `
    import { createDatabase } from ${JSON.stringify(join(ROOT, 'src/db/create-database.ts'))}
    import { migrateToLatest } from ${JSON.stringify(join(ROOT, 'src/db/migrate.ts'))}
    for (let round = 0; round < 10; round++) {
      const database = createDatabase(${JSON.stringify(`sqlite:${file}`)}, { checkpoints: { checkpointEvery: 1 } })
      await migrateToLatest(database.db)
      // two batches: the second starts the checkpoint thread
      for (let i = 0; i < 2; i++)
        await database.writer.run((tx) => tx.deleteFrom('users').where('id', '=', 'none').execute())
      await database.close()
    }
    console.log('closed')
  `
  const ran = await runToEnd(
    t,
    process.execPath,
    ['--input-type=module', '--eval', program],
    statusdEnv({}),
  )
  assert.equal(ran.code, 0, ran.stderr)
  assert.equal(ran.stdout.trim(), 'closed')
})
