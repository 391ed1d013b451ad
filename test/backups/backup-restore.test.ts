import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import type { Migration } from 'kysely/migration'
import { create, extract } from 'tar'
import { listBackups, pruneBackups, readManifest } from '../../src/db/backup.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import { executedMigrations, migrateToLatest, migratorFor } from '../../src/db/migrate.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { VERSION } from '../../src/lib/version.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { setStatusByKey, updateStatusById } from '../../src/modules/statuses/statuses.service.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { TEST_PLANS } from '../helpers/app.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { backedUpDatabase, dumpOf, statusdOn } from './databases.ts'

// docs/operations.md#backup-and-restore: `statusd backup [--to DIR]` and
// `statusd restore FILE [--force]`, on the engine under test.

/** A migrated database at `url` with a user, a key, statuses and their history. */
async function seeded(url: string): Promise<void> {
  const database = createDatabase(url, { poolSize: 2 })
  try {
    await migrateToLatest(database.db)
    const db = database.db
    const ada = await createUser(db, TEST_PLANS, { name: 'Ada', plan: 'pro', verified: true })
    await createApiKey(db, ada.id, { label: 'laptop' })
    const caller = { userId: ada.id, plan: ada.plan }
    for (let i = 0; i < 5; i++) {
      const { status } = await setStatusByKey({ db, plans: TEST_PLANS }, caller, `room-${i}`, {
        value: `V${i}`,
        description: 'ünïcödé 𝄞',
      })
      for (let j = 0; j < i; j++)
        await updateStatusById({ db, plans: TEST_PLANS }, caller, status.id, { value: `${i}.${j}` })
    }
  } finally {
    await database.close()
  }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/** The backup `file` unpacked, its manifest changed by `change`, packed again as `to`. */
async function tampered(
  file: string,
  to: string,
  change: (manifest: Record<string, unknown>, dir: string) => void,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'statusd-tampered-'))
  await extract({ file, cwd: dir })
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
  change(manifest, dir)
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest))
  const data = (manifest.data as { file: string }).file
  await create({ file: to, cwd: dir }, ['manifest.json', data])
  return to
}

describe(`statusd backup and restore [${TEST_ENGINE}]`, () => {
  it('a backup is one tar: its manifest (version, schema, engine, time) and data whose sha256 it gives', async (t) => {
    const source = await backedUpDatabase(t)
    await seeded(source.url)
    const to = join(source.dir, 'out')
    const r = await statusdOn(source.url, ['backup', '--to', to, '--json'])
    assert.equal(r.code, 0, r.err)
    const printed = JSON.parse(r.out)
    const [entry] = await listBackups(to)
    assert.ok(entry)
    assert.equal(printed.name, entry.name)
    assert.match(entry.name, /^statusd-\d{8}-\d{6}-[0-9a-f]{6}\.tar$/)
    const database = createDatabase(source.url, { poolSize: 1 })
    const applied = await executedMigrations(database.db).finally(() => database.close())
    const manifest = await readManifest(join(to, entry.name))
    assert.equal(manifest.statusd, VERSION)
    assert.equal(manifest.schemaVersion, applied.at(-1))
    assert.equal(manifest.engine, TEST_ENGINE)
    assert.ok(Date.parse(manifest.createdAt) > 0)
    const unpacked = mkdtempSync(join(tmpdir(), 'statusd-unpacked-'))
    await extract({ file: join(to, entry.name), cwd: unpacked })
    const data = readFileSync(join(unpacked, manifest.data.file))
    assert.equal(sha256(data), manifest.data.sha256)
    assert.equal(data.length, manifest.data.bytes)
  })

  it('restore fills an empty database with every row the backup holds', async (t) => {
    const source = await backedUpDatabase(t)
    await seeded(source.url)
    const before = await dumpOf(source.url)
    const backup = await statusdOn(source.url, ['backup', '--to', source.dir, '--json'])
    assert.equal(backup.code, 0, backup.err)
    const file = JSON.parse(backup.out).path
    const target = await source.lose()
    const r = await statusdOn(target, ['restore', file, '--json'])
    assert.equal(r.code, 0, r.err)
    assert.equal(JSON.parse(r.out).replaced, false)
    assert.deepEqual(await dumpOf(target), before)
  })

  it(`an SQLite backup restores into ${TEST_ENGINE} (into PostgreSQL by copying its rows)`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'statusd-sqlite-source-'))
    const sqliteUrl = `sqlite:${join(dir, 'statusd.db')}`
    await seeded(sqliteUrl)
    const before = await dumpOf(sqliteUrl)
    const backup = await statusdOn(sqliteUrl, ['backup', '--to', dir, '--json'])
    assert.equal(backup.code, 0, backup.err)
    const target = await (await backedUpDatabase(t)).lose()
    const r = await statusdOn(target, ['restore', JSON.parse(backup.out).path, '--json'])
    assert.equal(r.code, 0, r.err)
    assert.deepEqual(await dumpOf(target), before)
  })

  it('a backup of an older schema restores and is migrated to this version', async (t) => {
    const source = await backedUpDatabase(t)
    const [first] = Object.keys(migrations).sort()
    const older = createDatabase(source.url, { poolSize: 1 })
    try {
      const migrator = await migratorFor(older.db, {
        [first as string]: migrations[first as string] as Migration,
      })
      const { error } = await migrator.migrateToLatest()
      assert.equal(error, undefined)
      // a user as that schema has it (no column of a later migration)
      await older.db
        .insertInto('users')
        .values({
          id: 'older-user',
          name: 'Ada',
          plan: 'pro',
          verified: 1,
          created_at: '2026-11-29T00:00:00.000Z',
        } as never)
        .execute()
    } finally {
      await older.close()
    }
    const backup = await statusdOn(source.url, ['backup', '--to', source.dir, '--json'])
    assert.equal(backup.code, 0, backup.err)
    assert.equal(JSON.parse(backup.out).manifest.schemaVersion, first)
    const target = await source.lose()
    const r = await statusdOn(target, ['restore', JSON.parse(backup.out).path, '--json'])
    assert.equal(r.code, 0, r.err)
    assert.equal(JSON.parse(r.out).tables.users, 1)
    const restored = createDatabase(target, { poolSize: 1 })
    try {
      assert.deepEqual(await executedMigrations(restored.db), Object.keys(migrations).sort())
    } finally {
      await restored.close()
    }
  })

  it('restore refuses a database that holds rows, and replaces them with --force', async (t) => {
    const source = await backedUpDatabase(t)
    await seeded(source.url)
    const before = await dumpOf(source.url)
    const backup = await statusdOn(source.url, ['backup', '--to', source.dir, '--json'])
    const file = JSON.parse(backup.out).path
    // the source changes after its backup: restoring it must refuse, then put it back
    await seeded(source.url)
    const changed = await dumpOf(source.url)
    const refused = await statusdOn(source.url, ['restore', file])
    assert.equal(refused.code, 1)
    assert.match(refused.err, /the database is not empty \(2 users, .*pass --force/)
    assert.deepEqual(await dumpOf(source.url), changed, 'a refused restore changes nothing')
    const forced = await statusdOn(source.url, ['restore', file, '--force', '--json'])
    assert.equal(forced.code, 0, forced.err)
    assert.equal(JSON.parse(forced.out).replaced, true)
    assert.deepEqual(await dumpOf(source.url), before)
  })

  it('restore refuses a backup whose data does not match its checksum, changing nothing', async (t) => {
    const source = await backedUpDatabase(t)
    await seeded(source.url)
    const backup = await statusdOn(source.url, ['backup', '--to', source.dir, '--json'])
    const file = JSON.parse(backup.out).path
    const damaged = await tampered(file, join(source.dir, 'damaged.tar'), (manifest, dir) => {
      const data = join(dir, (manifest.data as { file: string }).file)
      const bytes = readFileSync(data)
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0xff
      writeFileSync(data, bytes)
    })
    const target = await source.lose()
    const r = await statusdOn(target, ['restore', damaged])
    assert.equal(r.code, 1)
    assert.match(
      r.err,
      /does not match its manifest \(sha256 [0-9a-f]{64}, manifest [0-9a-f]{64}\)/,
    )
  })

  it('restore refuses a backup of a newer schema than this statusd knows', async (t) => {
    const source = await backedUpDatabase(t)
    await seeded(source.url)
    const backup = await statusdOn(source.url, ['backup', '--to', source.dir, '--json'])
    const file = JSON.parse(backup.out).path
    const newer = await tampered(file, join(source.dir, 'newer.tar'), (manifest) => {
      manifest.schemaVersion = '2999-01-01T000000-from-the-future'
      manifest.statusd = '9.0.0'
    })
    const r = await statusdOn(await source.lose(), ['restore', newer])
    assert.equal(r.code, 1)
    assert.match(
      r.err,
      /has a newer schema \(2999-01-01T000000-from-the-future\) than this statusd .* restore it with statusd 9\.0\.0 or later/,
    )
  })

  it('restore refuses a file that is not a backup, and one that is not there', async (t) => {
    const source = await backedUpDatabase(t)
    const junk = join(source.dir, 'junk.tar')
    writeFileSync(junk, 'not a tar at all')
    const target = await source.lose()
    const r = await statusdOn(target, ['restore', junk])
    assert.equal(r.code, 1)
    assert.match(r.err, /is not a statusd backup/)
    const missing = await statusdOn(target, ['restore', join(source.dir, 'nowhere.tar')])
    assert.equal(missing.code, 1)
    assert.match(missing.err, /no file at/)
  })

  it('keeps the newest BACKUP_KEEP backups when pruning, whatever else the folder holds', async (t) => {
    const source = await backedUpDatabase(t)
    await seeded(source.url)
    const names: string[] = []
    for (let i = 0; i < 3; i++) {
      const r = await statusdOn(source.url, ['backup', '--json'], { BACKUP_DIR: source.dir })
      assert.equal(r.code, 0, r.err)
      names.push(JSON.parse(r.out).name)
    }
    writeFileSync(join(source.dir, 'notes.txt'), 'kept')
    const removed = await pruneBackups(source.dir, 1)
    assert.equal(removed.length, 2)
    const left = await listBackups(source.dir)
    assert.deepEqual(
      left.map((b) => b.name),
      [names[2]],
    )
    assert.equal(readFileSync(join(source.dir, 'notes.txt'), 'utf8'), 'kept')
  })

  it("a PostgreSQL restore replaces statusd's tables and leaves another table in the schema alone", {
    skip: TEST_ENGINE === 'postgres' ? false : 'PostgreSQL only',
  }, async (t) => {
    const source = await backedUpDatabase(t)
    await seeded(source.url)
    const before = await dumpOf(source.url)
    const backup = await statusdOn(source.url, ['backup', '--to', source.dir, '--json'])
    const file = JSON.parse(backup.out).path
    const database = createDatabase(source.url, { poolSize: 1 })
    try {
      await sql`create table other_app (note text)`.execute(database.db)
      await sql`insert into other_app values ('kept')`.execute(database.db)
    } finally {
      await database.close()
    }
    await seeded(source.url)
    const forced = await statusdOn(source.url, ['restore', file, '--force'])
    assert.equal(forced.code, 0, forced.err)
    assert.deepEqual(await dumpOf(source.url), before)
    const after = createDatabase(source.url, { poolSize: 1 })
    try {
      const { rows } = await sql<{ note: string }>`select note from other_app`.execute(after.db)
      assert.deepEqual(rows, [{ note: 'kept' }])
    } finally {
      await after.close()
    }
  })

  it('a PostgreSQL backup without pg_dump is refused, pointing to docs/postgres.md', {
    skip: TEST_ENGINE === 'postgres' ? false : 'PostgreSQL only',
  }, async (t) => {
    const source = await backedUpDatabase(t)
    await seeded(source.url)
    const r = await statusdOn(source.url, ['backup', '--to', source.dir], { PATH: '/nonexistent' })
    assert.equal(r.code, 1)
    assert.match(r.err, /pg_dump is not installed here: .*docs\/postgres\.md#backups/)
    assert.deepEqual(await listBackups(source.dir), [], 'no backup, not even part of one')
  })
})
