import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import { DEFAULT_BUSY_TIMEOUT_MS } from '../../src/db/engine.ts'
import { makeApp } from '../helpers/app.ts'
import { tempDir } from '../helpers/cleanup.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'

// How long a SQLite write waits for another process's lock: 1 s by default (better-sqlite3
// blocks the event loop while it waits, so every request waits with it), configurable with
// SQLITE_BUSY_TIMEOUT_MS (docs/operations.md, docs/security.md).

const busyTimeoutOf = async (options?: { busyTimeoutMs?: number }) => {
  const database = createDatabase('sqlite::memory:', options)
  try {
    const { sql } = await import('kysely')
    const rows = (await sql<{ timeout: number }>`pragma busy_timeout`.execute(database.db)).rows
    return Number(rows[0]?.timeout)
  } finally {
    await database.close()
  }
}

describe('SQLite busy timeout', () => {
  it('defaults to 1000 ms on the connection', async () => {
    assert.equal(DEFAULT_BUSY_TIMEOUT_MS, 1000)
    assert.equal(await busyTimeoutOf(), 1000)
    assert.equal(loadConfig({}).sqliteBusyTimeoutMs, 1000)
  })

  it('SQLITE_BUSY_TIMEOUT_MS sets it, 0 (fail at once) to 60000', async () => {
    assert.equal(loadConfig({ SQLITE_BUSY_TIMEOUT_MS: '250' }).sqliteBusyTimeoutMs, 250)
    assert.equal(loadConfig({ SQLITE_BUSY_TIMEOUT_MS: '0' }).sqliteBusyTimeoutMs, 0)
    assert.equal(loadConfig({ SQLITE_BUSY_TIMEOUT_MS: '' }).sqliteBusyTimeoutMs, 1000)
    assert.equal(await busyTimeoutOf({ busyTimeoutMs: 250 }), 250)
  })

  for (const bad of ['-1', '60001', '1.5', 'soon'])
    it(`SQLITE_BUSY_TIMEOUT_MS=${bad} is a one-line configuration error`, () =>
      assert.throws(
        () => loadConfig({ SQLITE_BUSY_TIMEOUT_MS: bad }),
        (err: Error) =>
          err instanceof ConfigError &&
          /SQLITE_BUSY_TIMEOUT_MS must be an integer/.test(err.message),
      ))
})

/** Another process (a CLI command, a backup tool) holds the write lock of `file` for `ms`. */
async function holdWriteLock(file: string, ms: number): Promise<{ released: Promise<void> }> {
  const sqlite = createRequire(import.meta.url).resolve('better-sqlite3')
  const child = spawn(process.execPath, [
    '-e',
    `const db = new (require(${JSON.stringify(sqlite)}))(${JSON.stringify(file)})
     db.exec('BEGIN IMMEDIATE'); process.stdout.write('locked\\n')
     setTimeout(() => { db.exec('COMMIT'); db.close() }, ${ms})`,
  ])
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve)
    child.once('exit', reject)
  })
  // note: in an object, or the async function's promise would wait for this one
  return { released: exited }
}

describe('SQLite busy timeout, with another process holding the write lock', {
  // a SQLite file of its own on either pass: once is enough
  skip: TEST_ENGINE === 'postgres' && 'SQLite only: runs in the SQLite pass',
}, () => {
  for (const [timeout, expected] of [
    [undefined, 200],
    [0, 503],
  ] as const)
    it(`a write ${expected === 200 ? 'waits for it (SQLITE_BUSY_TIMEOUT_MS 1 s)' : 'fails at once with SQLITE_BUSY_TIMEOUT_MS=0 (503)'}`, async (ctx) => {
      const dir = tempDir(ctx, 'statusd-busy-')
      const file = join(dir, 'statusd.db')
      const t = await makeApp(ctx, {
        databaseUrl: `sqlite:${file}`,
        ...(timeout !== undefined && { busyTimeoutMs: timeout }),
      })
      const owner = await t.user()
      const created = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'ON' })
      // note: every write reads before it writes, and SQLite does not wait for a lock a
      // read transaction upgrades to: only a write transaction begun IMMEDIATE waits
      const { released } = await holdWriteLock(file, 150)
      const patch = await t.request(owner, 'PATCH', `/v1/status/${created.json().id}`, {
        value: 'OFF',
      })
      assert.equal(patch.statusCode, expected, patch.body)
      await released
      if (expected === 503) assert.equal(patch.json().errorCode, 'unavailable')
    })
})
