import assert from 'node:assert/strict'
import path from 'node:path'
import { describe, it } from 'node:test'
import { listBackups } from '../../src/db/backup.ts'
import { tempDir } from '../helpers/cleanup.ts'
import { asLogLine, BIN, type Json, start, statusdEnv } from '../helpers/processes.ts'

// docs/operations.md#backup-and-restore on a running `statusd serve`: BACKUP_DIR and
// BACKUP_EVERY as the operator sets them, and the first start's key (an operator's) taking
// one over HTTP.

describe('statusd serve with BACKUP_DIR', () => {
  it("the first start's key takes a backup into BACKUP_DIR over HTTP, and the admin API shows the schedule", async (t) => {
    const dir = tempDir(t, 'statusd-serve-backups-')
    const backups = path.join(dir, 'backups')
    const proc = start(
      t,
      process.execPath,
      [BIN, 'serve', '--json'],
      statusdEnv({
        DATABASE_URL: `sqlite:${path.join(dir, 'statusd.db')}`,
        PORT: '0',
        HOST: '127.0.0.1',
        BACKUP_DIR: backups,
        BACKUP_EVERY: '24h',
        BACKUP_KEEP: '7',
      }),
    )
    const line = await proc.waitForLine(
      (l) => asLogLine(l)?.firstStart !== undefined,
      'the first-start JSON line',
    )
    const { firstStart } = asLogLine(line) as Json
    const headers = { 'service-api-key': firstStart.key }
    const taken = await fetch(`${firstStart.url}/v1/admin/backups`, { method: 'POST', headers })
    assert.equal(taken.status, 201, await taken.clone().text())
    const { name } = (await taken.json()) as { name: string }
    assert.deepEqual(
      (await listBackups(backups)).map((b) => b.name),
      [name],
    )
    const list = await fetch(`${firstStart.url}/v1/admin/backups`, { headers })
    const body = (await list.json()) as Json
    assert.deepEqual([body.enabled, body.every, body.keep], [true, '24h', 7])
  })
})
