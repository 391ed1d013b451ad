import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { createDatabase, DEFAULT_BUSY_TIMEOUT_MS } from '../../src/db/create-db.ts'

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
