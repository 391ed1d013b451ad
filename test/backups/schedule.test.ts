import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { loadConfig } from '../../src/config.ts'
import { listBackups } from '../../src/db/backup.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { backUpIfDue, startBackupSchedule } from '../../src/modules/backups/backups.service.ts'
import { bounded } from '../helpers/bounded.ts'
import { defer } from '../helpers/cleanup.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { backedUpDatabase } from './databases.ts'

// docs/operations.md#scheduled-backups: BACKUP_DIR, BACKUP_EVERY, BACKUP_KEEP.

const HOUR = 3_600_000

describe(`scheduled backups [${TEST_ENGINE}]`, () => {
  it('of instances checking at the same time, one takes the backup; none again until BACKUP_EVERY has passed', async (t) => {
    const source = await backedUpDatabase(t)
    // two instances on one database, reading one clock the test moves. note: SQLite is served
    // by one process, whose connection both share here (two connections of one thread would
    // wait for each other's lock with the event loop blocked)
    let now = Date.parse('2026-11-29T03:00:00Z')
    const clock = { now: () => now }
    const open = () => {
      const database = createDatabase(source.url, { poolSize: 2 })
      defer(t, () => database.close())
      return database
    }
    const shared = TEST_ENGINE === 'sqlite' ? open() : undefined
    const instances = [0, 1].map(() => ({
      database: shared ?? open(),
      url: source.url,
      dir: source.dir,
      clock,
    }))
    await migrateToLatest((instances[0] as (typeof instances)[0]).database.db)
    const every = { everyMs: 24 * HOUR, keep: 2 }

    const first = await Promise.all(instances.map((i) => backUpIfDue(i, every)))
    assert.equal(first.filter((e) => e !== null).length, 1, 'one of the two took it')
    now += 23 * HOUR
    const early = await Promise.all(instances.map((i) => backUpIfDue(i, every)))
    assert.deepEqual(early, [null, null], 'not due yet, on either instance')
    assert.equal((await listBackups(source.dir)).length, 1)

    for (let day = 0; day < 3; day++) {
      now += 24 * HOUR
      const taken = await Promise.all(instances.map((i) => backUpIfDue(i, every)))
      assert.equal(taken.filter((e) => e !== null).length, 1, `day ${day}: one backup`)
    }
    const left = await listBackups(source.dir)
    assert.equal(left.length, 2, 'BACKUP_KEEP=2 keeps the newest two')
    assert.deepEqual(
      left.map((b) => b.manifest.createdAt),
      [new Date(now).toISOString(), new Date(now - 24 * HOUR).toISOString()],
    )
  })
})

describe(`the backup schedule of a running instance [${TEST_ENGINE}]`, () => {
  it('checks on its own, logs each backup it takes, keeps BACKUP_KEEP, and stops with the instance', async (t) => {
    const source = await backedUpDatabase(t)
    const database = createDatabase(source.url, { poolSize: 2 })
    defer(t, () => database.close())
    await migrateToLatest(database.db)
    // the clock moves a day at each reading: every check finds a backup due
    let now = Date.parse('2026-11-29T03:00:00Z')
    const clock = {
      now: () => {
        now += 24 * HOUR
        return now
      },
    }
    const taken: string[] = []
    let third: () => void = () => {}
    const thirdTaken = new Promise<void>((resolve) => {
      third = resolve
    })
    const schedule = startBackupSchedule(
      { database, url: source.url, dir: source.dir, clock },
      // a tiny period, so that the test waits for checks, not for hours
      { everyMs: 40, keep: 2 },
      {
        info: (fields) => {
          taken.push((fields as { backup: string }).backup)
          if (taken.length === 3) third()
        },
        error: (fields) => assert.fail(`a scheduled backup failed: ${JSON.stringify(fields)}`),
      },
    )
    await bounded('three scheduled backups', thirdTaken)
    await schedule.stop()
    const left = (await listBackups(source.dir)).map((b) => b.name)
    assert.equal(left.length, 2)
    for (const name of left) assert.ok(taken.includes(name))
  })
})

describe('BACKUP_DIR, BACKUP_EVERY and BACKUP_KEEP (docs/operations.md#configuration)', () => {
  const env = (vars: Record<string, string>) => ({ DATABASE_URL: 'sqlite::memory:', ...vars })
  it('BACKUP_EVERY is minutes, hours or days, and needs BACKUP_DIR', () => {
    const config = loadConfig(env({ BACKUP_DIR: '/b', BACKUP_EVERY: '24h', BACKUP_KEEP: '7' }))
    assert.deepEqual(
      [config.backupDir, config.backupEveryMs, config.backupKeep],
      ['/b', 24 * HOUR, 7],
    )
    assert.equal(
      loadConfig(env({ BACKUP_DIR: '/b', BACKUP_EVERY: '30m' })).backupEveryMs,
      1_800_000,
    )
    assert.equal(
      loadConfig(env({ BACKUP_DIR: '/b', BACKUP_EVERY: '7d' })).backupEveryMs,
      7 * 24 * HOUR,
    )
    for (const bad of ['24', '1.5h', '0h', '1w', 'daily'])
      assert.throws(
        () => loadConfig(env({ BACKUP_DIR: '/b', BACKUP_EVERY: bad })),
        new RegExp(
          `BACKUP_EVERY must be a number of minutes, hours or days, e\\.g\\. 30m, 24h or 7d, got "${bad.replace('.', '\\.')}"`,
        ),
      )
    assert.throws(() => loadConfig(env({ BACKUP_EVERY: '24h' })), /BACKUP_EVERY needs BACKUP_DIR/)
    assert.throws(
      () => loadConfig(env({ BACKUP_DIR: '/b', BACKUP_KEEP: '0' })),
      /BACKUP_KEEP must be/,
    )
    const none = loadConfig(env({}))
    assert.deepEqual([none.backupDir, none.backupEveryMs, none.backupKeep], [null, null, null])
  })
})
