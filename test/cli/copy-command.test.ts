import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import SQLite from 'better-sqlite3'
import { type Kysely, sql } from 'kysely'
import { copyCommand, renderBar } from '../../src/cli/copy-command.ts'
import { main } from '../../src/cli/main.ts'
import { COPY_TABLES, type CopyProgress, copyDatabase, PRIMARY_KEYS } from '../../src/db/copy.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import type { DB } from '../../src/db/database.ts'
import type { Database } from '../../src/db/engine.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createApiKey, revokeKey } from '../../src/modules/keys/keys.service.ts'
import {
  deleteStatusById,
  setStatusByKey,
  updateStatusById,
} from '../../src/modules/statuses/statuses.service.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { makeApp, TEST_PLANS } from '../helpers/app.ts'
import { openDatabase } from '../helpers/database.ts'
import { freshDatabase, TEST_ENGINE, type TestDatabase } from '../helpers/engine.ts'

// docs/postgres.md#moving-from-sqlite-to-postgresql-statusd-copy: `statusd copy --from sqlite:…
// --to <engine under test>`.

/** Every statusd row, table by table, in primary-key order: what "the same data" means. */
async function dump(db: Kysely<DB>): Promise<Record<string, unknown[]>> {
  const loose = db as unknown as Kysely<Record<string, Record<string, unknown>>>
  const out: Record<string, unknown[]> = {}
  for (const table of COPY_TABLES) {
    let q = loose.selectFrom(table).selectAll()
    for (const k of PRIMARY_KEYS[table]) q = q.orderBy(k)
    out[table] = await q.execute()
  }
  return out
}

/** Runs `statusd …` in-process; returns the exit code and what it printed. */
async function statusd(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  // note: main() reports failures on process.stderr itself; caught here to assert on them
  const write = process.stderr.write
  process.stderr.write = ((chunk: string | Uint8Array) => {
    err += String(chunk)
    return true
  }) as typeof process.stderr.write
  try {
    const code = await main(argv, (t) => {
      out += t
      return true
    })
    return { code, out, err }
  } finally {
    process.stderr.write = write
  }
}

async function seed(db: Kysely<DB>): Promise<{ key: string; statusIds: string[] }> {
  const deps = { db, plans: TEST_PLANS }
  const alice = await createUser(db, TEST_PLANS, {
    name: 'Alice',
    email: 'alice@example.com',
    plan: 'pro',
    verified: true,
  })
  const bob = await createUser(db, TEST_PLANS, { name: 'Bøb 🟢', plan: 'free', verified: false })
  const key = (await createApiKey(db, alice.id, { label: 'laptop' })).key
  const old = await createApiKey(db, alice.id)
  await revokeKey({ db }, old.id)
  await createApiKey(db, bob.id, { expiresAt: '2099-01-01T00:00:00Z' })
  const caller = { userId: alice.id, plan: alice.plan }
  const statusIds: string[] = []
  for (let i = 0; i < 7; i++) {
    const { status } = await setStatusByKey(deps, caller, `room-${i}`, {
      value: `V${i}`,
      description: i === 0 ? 'Line one\nline two — “ünïcödé” 𝄞' : '',
      colorNo: (i % 12) + 1,
    })
    statusIds.push(status.id)
    for (let j = 0; j < i; j++)
      await updateStatusById(deps, caller, status.id, { value: `${i}.${j}` })
  }
  await setStatusByKey(deps, caller, 'no-value-yet', { name: 'Empty' })
  // a role granted to bob, a stored idempotent response and a deleted status whose history
  // the sweep has yet to finish: every table has rows
  await db
    .insertInto('status_roles')
    .values({
      status_id: statusIds[0] as string,
      user_id: bob.id,
      role: 'subscriber',
      created_at: '2026-11-22T00:00:00.000Z',
    })
    .execute()
  await db
    .insertInto('idempotency_keys')
    .values({
      user_id: alice.id,
      key: 'retry-1',
      fingerprint: 'f'.repeat(64),
      status_code: 200,
      location: null,
      body: '{"value":"V0"}',
      created_at: '2026-11-22T00:00:00.000Z',
    })
    .execute()
  await db
    .insertInto('status_deletions')
    .values({ status_id: 'deleted-status', deleted_at: '2026-11-22T00:00:00.000Z' })
    .execute()
  return { key, statusIds }
}

describe(`statusd copy [sqlite → ${TEST_ENGINE}]`, () => {
  let dir: string
  let sourceUrl: string
  let source: Database
  let target: TestDatabase
  let seeded: { key: string; statusIds: string[] }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'statusd-copy-'))
    sourceUrl = `sqlite:${join(dir, 'source.db')}`
    source = createDatabase(sourceUrl)
    await migrateToLatest(source.db)
    seeded = await seed(source.db)
    target =
      TEST_ENGINE === 'sqlite'
        ? { url: `sqlite:${join(dir, 'target.db')}`, drop: async () => {} }
        : await freshDatabase()
  })
  after(async () => {
    await source.close()
    await target.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  const targetDump = async () => {
    const t = createDatabase(target.url)
    try {
      return await dump(t.db)
    } finally {
      await t.close()
    }
  }

  it('copies every user, key, status and history row into an empty database, in batches', async () => {
    const { code, out } = await statusd(
      'copy',
      '--from',
      sourceUrl,
      '--to',
      target.url,
      '--batch-size',
      '3',
      '--json',
    )
    assert.equal(code, 0, out)
    const summary = JSON.parse(out)
    const expected = await dump(source.db)
    assert.deepEqual(summary.tables, {
      users: 2,
      api_keys: 3,
      statuses: 8,
      status_history: expected.status_history?.length,
      status_roles: 1,
      idempotency_keys: 1,
      status_deletions: 1,
      sessions: 0,
      passkeys: 0,
      auth_tokens: 0,
      // each key made records its keyCreated event (docs/security.md#security-log)
      security_events: expected.security_events?.length,
      role_invitations: 0,
      invitation_links: 0,
      invitation_mails: 0,
      share_links: 0,
      status_schedules: 0,
      boards: 0,
      channels: 0,
      notification_rules: 0,
      // every value write records its status.changed event (docs/notifications.md#delivery)
      outbox_events: expected.outbox_events?.length,
      deliveries: 0,
      delivery_attempts: 0,
      service_settings: 0,
      leases: 0,
    })
    assert.equal(summary.replaced, false)
    assert.deepEqual(await targetDump(), expected)
  })

  it("an online copy never holds the source's write lock: the serving instance keeps writing", async (t) => {
    const to = openDatabase(t, `sqlite:${join(dir, 'online.db')}`)
    const file = join(dir, 'source.db')
    const outcomes: string[] = []
    await copyDatabase(source.db, to.db, {
      batchSize: 2,
      onProgress: ({ copiedAll }) => {
        if (copiedAll === 0 || outcomes.length > 0) return
        // mid-copy, another connection (the server) takes the write lock without waiting
        const writer = new SQLite(file)
        try {
          writer.pragma('busy_timeout = 0')
          writer.exec('begin immediate')
          writer.exec('rollback')
          outcomes.push('written')
        } catch (err) {
          outcomes.push(String((err as { code?: string }).code))
        } finally {
          writer.close()
        }
      },
    })
    assert.deepEqual(outcomes, ['written'])
  })

  it('a VACUUM INTO backup (not in WAL mode) is a source too, read as it is and left unchanged', async (t) => {
    const backup = join(dir, 'vacuumed.db')
    const copy = join(dir, 'from-backup.db')
    await sql`vacuum into ${backup}`.execute(source.db)
    const before = readFileSync(backup)
    assert.equal(before[18], 1, 'the backup is in rollback-journal mode')
    const { code, out } = await statusd(
      'copy',
      '--from',
      `sqlite:${backup}`,
      '--to',
      `sqlite:${copy}`,
    )
    assert.equal(code, 0, out)
    assert.deepEqual(readFileSync(backup), before, 'the backup is untouched')
    assert.equal(existsSync(`${backup}-wal`), false)
    const copied = openDatabase(t, `sqlite:${copy}`)
    assert.deepEqual(await dump(copied.db), await dump(source.db))
  })

  it('a service on the copy works with the keys issued before', async (ctx) => {
    const t = await makeApp(ctx, { databaseUrl: target.url })
    const res = await t.request(
      { id: '', key: seeded.key },
      'GET',
      `/v1/status/${seeded.statusIds[3]}`,
    )
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().changeCount, 4)
    const list = await t.request({ id: '', key: seeded.key }, 'GET', '/v1/user/status')
    assert.equal(list.json().length, 8)
  })

  // note: the app a test above opened on the target made its VAPID key pair (a service setting)
  it('refuses a target that holds data, without --force, and leaves it alone', async () => {
    const before = await targetDump()
    const { code, err } = await statusd('copy', '--from', sourceUrl, '--to', target.url)
    assert.equal(code, 1)
    assert.match(
      err,
      /target is not empty \(2 users, 3 API keys, 8 statuses, \d+ history rows, 1 role, 1 idempotent response, \d+ deleted status(?:es)? still swept, 0 sessions, 0 passkeys, 0 one-time tokens, \d+ security events, 0 pending invitations, 0 invitation links, 0 invitation mails sent, 0 share links, 0 schedules, 0 boards, 0 notification channels, 0 notification rules, \d+ notification events, 0 deliveries, 0 delivery attempts, [01] service settings?, 0 leases\); pass --force/,
    )
    assert.deepEqual(await targetDump(), before)
  })

  it('with --force it replaces the contents: running it twice gives the same result', async () => {
    const deps = { db: source.db, plans: TEST_PLANS }
    const owner = await source.db
      .selectFrom('users')
      .select(['id', 'plan'])
      .where('email', '=', 'alice@example.com')
      .executeTakeFirstOrThrow()
    const caller = { userId: owner.id, plan: owner.plan }
    await deleteStatusById(deps, caller, seeded.statusIds[1] as string)
    await setStatusByKey(deps, caller, 'added-later', { value: 'NEW' })
    for (let run = 0; run < 2; run++) {
      const { code, out } = await statusd(
        'copy',
        '--from',
        sourceUrl,
        '--to',
        target.url,
        '--force',
      )
      assert.equal(code, 0, out)
      assert.match(out, /replacing what it held/)
      assert.deepEqual(await targetDump(), await dump(source.db), `run ${run + 1}`)
    }
  })

  it('prints one plain line per table when not on a terminal', async () => {
    const { out } = await statusd('copy', '--from', sourceUrl, '--to', target.url, '--force')
    for (const table of COPY_TABLES)
      assert.match(out, new RegExp(`^copied ${table}: \\d+ rows$`, 'm'))
    assert.ok(!out.includes('\r') && !out.includes('\u001b'), 'no terminal control characters')
  })

  it('draws a progress bar on a terminal', async () => {
    const frames: string[] = []
    let out = ''
    await copyCommand(
      ['--from', sourceUrl, '--to', target.url, '--force', '--batch-size', '2'],
      {
        json: false,
        out: (t) => {
          out += t
        },
      },
      { isTTY: true, write: (t: string) => frames.push(t) },
    )
    assert.ok(frames.length > 1)
    assert.match(frames.at(-2) ?? '', /^\r\[#{30}\] 100%/, 'ends full')
    assert.doesNotMatch(out, /^copied users:/m, 'the bar replaces the plain lines')
  })

  it('a missing source file is an error, and is not created', async () => {
    const missing = join(dir, 'typo.db')
    const { code } = await statusd(
      'copy',
      '--from',
      `sqlite:${missing}`,
      '--to',
      target.url,
      '--force',
    )
    assert.equal(code, 1)
    assert.equal(existsSync(missing), false)
  })

  it('a source that is not a statusd database is refused', async () => {
    const other = createDatabase(`sqlite:${join(dir, 'other.db')}`)
    await other.close()
    const { code } = await statusd(
      'copy',
      '--from',
      `sqlite:${join(dir, 'other.db')}`,
      '--to',
      target.url,
      '--force',
    )
    assert.equal(code, 1)
  })

  it('the source is only read: a file that is no database is refused untouched, and no target is left', async () => {
    const empty = join(dir, 'empty.db')
    const text = join(dir, 'notes.db')
    writeFileSync(empty, '')
    writeFileSync(text, 'just some text, long enough to hold a header\n')
    for (const file of [empty, text]) {
      const before = readFileSync(file)
      const newTarget = join(dir, `never-${basename(file)}`)
      const { code, err } = await statusd(
        'copy',
        '--from',
        `sqlite:${file}`,
        '--to',
        `sqlite:${newTarget}`,
      )
      assert.equal(code, 1)
      assert.match(err, /is not a statusd database/)
      assert.deepEqual(readFileSync(file), before, 'the source is unchanged')
      assert.equal(existsSync(`${file}-wal`), false)
      assert.equal(existsSync(newTarget), false, 'no empty target file is left behind')
    }
  })

  it('a refused copy leaves no new target file behind', async () => {
    // a statusd database with nothing in it: refused as a source with nothing to copy, or
    // copied; either way a target that did not exist before exists only if the copy ran
    const newTarget = join(dir, 'refused-target.db')
    const other = createDatabase(`sqlite:${join(dir, 'unmigrated.db')}`)
    await other.close()
    const { code } = await statusd(
      'copy',
      '--from',
      `sqlite:${join(dir, 'unmigrated.db')}`,
      '--to',
      `sqlite:${newTarget}`,
    )
    assert.equal(code, 1, 'an unmigrated source is refused')
    assert.equal(existsSync(newTarget), false)
  })

  it('usage errors: missing --to, the same database twice, a bad batch size', async () => {
    assert.equal((await statusd('copy', '--from', sourceUrl)).code, 2)
    assert.equal((await statusd('copy', '--from', sourceUrl, '--to', sourceUrl)).code, 2)
    assert.equal(
      (await statusd('copy', '--from', sourceUrl, '--to', target.url, '--batch-size', '0')).code,
      2,
    )
  })
})

describe('copy progress bar', () => {
  const frame = (copiedAll: number, totalAll: number): CopyProgress => ({
    table: 'statuses',
    copied: 1,
    total: 2,
    copiedAll,
    totalAll,
  })
  it('shows the share of all rows copied', () => {
    assert.equal(renderBar(frame(0, 10)), `[${'-'.repeat(30)}]   0%  0/10 rows  statuses 1/2`)
    assert.equal(
      renderBar(frame(5, 10)),
      `[${'#'.repeat(15)}${'-'.repeat(15)}]  50%  5/10 rows  statuses 1/2`,
    )
    assert.match(renderBar(frame(0, 0)), /100%/, 'an empty database is done at once')
  })
})
