import assert from 'node:assert/strict'
import path from 'node:path'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import { writeRefusalOf } from '../../src/db/storage-error.ts'
import { WRITE_PROBE_AFTER_MS } from '../../src/modules/health/write-health.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { defer, type Lifetime, tempDir } from '../helpers/cleanup.ts'
import { testClock } from '../helpers/clock.ts'
import { freshDatabase, postgresOnly } from '../helpers/engine.ts'

// /readyz stays 200 while every write fails on a full disk (hardening finding 12). Once a
// write fails because storage refuses writes (full, read-only), /readyz answers 503 naming
// why (docs/operations.md#health-probes-and-metrics), so a load balancer sends traffic
// elsewhere; until a write succeeds again, or, when no write has been refused for a while, a
// probe write does.

/** A description that needs a new page of the file wherever it lands (storage-faults.test.ts). */
const PAGE_SPILLING_DESCRIPTION = '\u{1F7E2}'.repeat(400)

async function sqliteFixture(ctx: Lifetime) {
  const clock = testClock()
  const file = path.join(tempDir(ctx), 'statusd.db')
  const t = await makeApp(ctx, { databaseUrl: `sqlite:${file}`, deps: { clock } })
  const owner = await t.user()
  return { t, owner, clock }
}

async function readyz(t: TestApp) {
  const res = await t.app.inject({ method: 'GET', url: '/readyz' })
  return { status: res.statusCode, body: res.json(), retryAfter: res.headers['retry-after'] }
}

/** Asserts /readyz answers 503 unavailable with a message naming `why`. */
async function assertNotReady(t: TestApp, why: RegExp, what: string): Promise<void> {
  const ready = await readyz(t)
  assert.equal(ready.status, 503, `${what}: ${JSON.stringify(ready.body)}`)
  assert.equal(ready.body.errorCode, 'unavailable')
  assert.match(ready.body.message, why, what)
  assert.ok(ready.retryAfter, 'says when to ask again')
}

describe('/readyz stays 200 while every write fails on a full disk', () => {
  it('a full disk (SQLite size limit): /readyz answers 503 saying so until a write succeeds again', async (ctx) => {
    const { t, owner, clock } = await sqliteFixture(ctx)
    assert.equal((await readyz(t)).status, 200)
    const pages = Number(
      (await sql<{ page_count: number }>`pragma page_count`.execute(t.database.db)).rows[0]
        ?.page_count ?? 0,
    )
    await sql.raw(`pragma max_page_count = ${pages}`).execute(t.database.db)
    let refused = 0
    for (let i = 0; i < 200 && refused === 0; i++) {
      const res = await t.request(owner, 'POST', `/v1/status-keys/fill-${i}`, {
        description: PAGE_SPILLING_DESCRIPTION,
      })
      if (res.statusCode === 503) refused++
      else assert.equal(res.statusCode, 201, res.body)
    }
    assert.equal(refused, 1, 'the disk filled up')
    await assertNotReady(t, /full/, 'after a write refused for a full disk')
    // reads still work, and do not make it ready
    assert.equal((await t.request(owner, 'GET', '/v1/user/status')).statusCode, 200)
    clock.advance(WRITE_PROBE_AFTER_MS / 2)
    await assertNotReady(t, /full/, 'still, while writes keep failing')

    await sql`pragma max_page_count = 1073741823`.execute(t.database.db)
    const res = await t.request(owner, 'POST', '/v1/status-keys/after', { value: 'BACK' })
    assert.equal(res.statusCode, 201, res.body)
    assert.equal((await readyz(t)).status, 200, 'a write succeeded: ready again')
  })

  it('a read-only database: /readyz answers 503 until a probe write succeeds, with no client writing', async (ctx) => {
    const { t, owner, clock } = await sqliteFixture(ctx)
    await sql`pragma query_only = on`.execute(t.database.db)
    const res = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'FREE' })
    assert.equal(res.statusCode, 503, res.body)
    await assertNotReady(t, /read-only/, 'after a write refused by read-only storage')
    // no write for a while: /readyz tries one itself, which storage still refuses
    clock.advance(WRITE_PROBE_AFTER_MS)
    await assertNotReady(t, /read-only/, 'the probe write is refused too')
    await sql`pragma query_only = off`.execute(t.database.db)
    await assertNotReady(t, /read-only/, 'no probe again until a while after the last refusal')
    clock.advance(WRITE_PROBE_AFTER_MS)
    assert.equal((await readyz(t)).status, 200, 'the probe write succeeded: ready again')
    assert.equal(
      (await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'FREE' })).statusCode,
      201,
    )
  })
})

describe('/readyz and refused writes on PostgreSQL', { skip: postgresOnly }, () => {
  it('a write refused as read-only (SQLSTATE 25006) is a 503 and makes /readyz 503 until a write succeeds', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user()
    // note: what a read-only server (a standby after a failover) answers every write
    await sql`create function statusd_test_read_only() returns trigger language plpgsql as $$
      begin raise exception 'cannot execute INSERT in a read-only transaction' using errcode = '25006'; end $$`.execute(
      t.database.db,
    )
    await sql`create trigger statusd_test_read_only before insert on statuses
      for each row execute function statusd_test_read_only()`.execute(t.database.db)
    const res = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'FREE' })
    assert.equal(res.statusCode, 503, res.body)
    assert.equal(res.json().errorCode, 'unavailable')
    await assertNotReady(t, /read-only/, 'after a write refused as read-only')
    await sql`drop trigger statusd_test_read_only on statuses`.execute(t.database.db)
    assert.equal(
      (await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'FREE' })).statusCode,
      201,
    )
    assert.equal((await readyz(t)).status, 200)
  })

  it('the probe write is refused by a read-only session, and succeeds on a writable one', async (ctx) => {
    const fresh = await freshDatabase()
    defer(ctx, () => fresh.drop())
    const writable = createDatabase(fresh.url)
    defer(ctx, () => writable.close())
    await writable.probeWrite()
    const url = new URL(fresh.url)
    const options = url.searchParams.get('options')
    url.searchParams.set(
      'options',
      `${options ? `${options} ` : ''}-c default_transaction_read_only=on`,
    )
    const readOnly = createDatabase(url.href)
    defer(ctx, () => readOnly.close())
    const refusal = await readOnly.probeWrite().then(
      () => undefined,
      (err: unknown) => writeRefusalOf(err),
    )
    assert.equal(refusal, 'readOnly')
  })
})
