import { join } from 'node:path'
import {
  BACKUP_NAME,
  type BackupEntry,
  listBackups,
  pruneBackups,
  takeBackup,
} from '../../db/backup.ts'
import type { Database } from '../../db/engine.ts'
import { lockForTransaction } from '../../db/locks.ts'
import type { Clock } from '../../lib/clock.ts'
import { findLastScheduled, recordScheduled } from './backups.repository.ts'

export { BackupRefused } from '../../db/backup.ts'
export type { BackupEntry }

/** Where this instance's backups go and how it takes them (docs/operations.md#backup-and-restore). */
export interface Backups {
  database: Database
  /** The database's URL (DATABASE_URL): the engine's tools open it themselves. */
  url: string
  /** BACKUP_DIR. */
  dir: string
  clock: Clock
}

/** Takes a backup now, into the backup folder. */
export const backUpNow = (backups: Backups): Promise<BackupEntry> =>
  takeBackup(backups.database, backups.url, backups.dir, () => new Date(backups.clock.now()))

/** The backups in the folder, newest first. */
export const backupsInFolder = (backups: Backups): Promise<BackupEntry[]> =>
  listBackups(backups.dir)

/** The path of the backup `name` in the folder, or undefined when no backup has that name. */
export async function backupPath(backups: Backups, name: string): Promise<string | undefined> {
  if (!BACKUP_NAME.test(name)) return undefined
  const found = (await listBackups(backups.dir)).some((b) => b.name === name)
  return found ? join(backups.dir, name) : undefined
}

/** The advisory lock the instances take turns on to claim a scheduled backup. */
const SCHEDULE_LOCK = 'statusd:backups'

/**
 * Takes the scheduled backup if one is due: when the last one, taken by whichever instance,
 * began `everyMs` or more ago. The claim is one transaction under a lock every instance
 * takes, so of several instances checking at once one takes it and the others find it
 * taken. Then the folder keeps the newest `keep` backups. Returns the backup taken, if any.
 */
export async function backUpIfDue(
  backups: Backups,
  { everyMs, keep }: { everyMs: number; keep: number | null },
): Promise<BackupEntry | null> {
  const now = backups.clock.now()
  const claimed = await backups.database.db.transaction().execute(async (tx) => {
    await lockForTransaction(tx, SCHEDULE_LOCK)
    const last = await findLastScheduled(tx)
    if (last !== undefined && now - Date.parse(last) < everyMs) return false
    await recordScheduled(tx, new Date(now).toISOString())
    return true
  })
  if (!claimed) return null
  const entry = await backUpNow(backups)
  if (keep !== null) await pruneBackups(backups.dir, keep)
  return entry
}

/**
 * Checks for a due backup every quarter of `everyMs` (at most every quarter hour), so that a
 * backup is late by no more than that, and an instance restarted more often than `everyMs`
 * still takes them. Returns how to stop it.
 */
export function startBackupSchedule(
  backups: Backups,
  options: { everyMs: number; keep: number | null },
  log: {
    info(fields: object, message: string): void
    error(fields: object, message: string): void
  },
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined
  const check = () => {
    if (running) return
    running = backUpIfDue(backups, options)
      .then(
        (entry) => {
          if (entry)
            log.info(
              { backup: entry.name, bytes: entry.bytes, dir: backups.dir },
              'scheduled backup taken',
            )
        },
        (err: unknown) => log.error({ err }, 'scheduled backup failed'),
      )
      .finally(() => {
        running = undefined
      })
  }
  const timer = setInterval(check, Math.min(options.everyMs / 4, 15 * 60 * 1000))
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
