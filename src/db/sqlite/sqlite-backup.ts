import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { BackupRefused } from '../backup-refused.ts'
import type { BackupSupport } from '../engine.ts'

/**
 * The backup thread: opens its own connection to the database file and copies it with
 * SQLite's online backup, every page in one step. One step reads one snapshot (the log keeps
 * taking the server's commits meanwhile, which the copy does not see), so the copy is
 * consistent and never starts over; on its own thread, it never blocks the event loop.
 *
 * note: this function's source runs as the thread's whole program (an `eval` worker), as
 * the checkpoint thread's does (checkpoint-worker.ts): plain JavaScript, nothing imported.
 */
function backupThread(require: NodeJS.Require): void {
  const { parentPort, workerData } = require('node:worker_threads')
  const { file, to, driver } = workerData as { file: string; to: string; driver: string }
  const SQLite = require(driver) as typeof import('better-sqlite3')
  const db = new SQLite(file, { fileMustExist: true })
  // note: the first step copies nothing (better-sqlite3 starts with 0 pages), the second all
  db.backup(to, { progress: () => 0x7fffffff }).then(
    () => {
      db.close()
      parentPort?.postMessage({ ok: true })
    },
    (error: Error) => {
      db.close()
      parentPort?.postMessage({ ok: false, message: error.message })
    },
  )
}

/** Copies the SQLite database `file` to `to` on a thread of its own. */
function backupOnThread(file: string, to: string): Promise<void> {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(`(${backupThread.toString()})(require)`, {
    eval: true,
    workerData: { file, to, driver },
  })
  return new Promise<void>((resolve, reject) => {
    let settled = false
    worker.once('message', (result: { ok: boolean; message?: string }) => {
      settled = true
      if (result.ok) resolve()
      else reject(new Error(`SQLite backup failed: ${result.message}`))
    })
    worker.once('error', (error) => {
      settled = true
      reject(error)
    })
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`SQLite backup thread exited (${code})`))
    })
  })
}

/**
 * SQLite's backups: the online backup of the file, restored the same way (every page of the
 * backup's database into the target's file, through SQLite, which takes the target's locks),
 * or by copying its rows into another engine (copy.ts).
 */
export function sqliteBackupSupport(pathOf: (url: string) => string | null): BackupSupport {
  return {
    dataFile: 'statusd.sqlite',
    async take({ url }, to) {
      const file = pathOf(url)
      if (file === null || file === ':memory:')
        throw new BackupRefused('an in-memory database has no file to back up')
      await backupOnThread(file, to)
      return {}
    },
    async restore({ url }, file) {
      const target = pathOf(url)
      if (target === null || target === ':memory:')
        throw new BackupRefused('an in-memory database cannot be restored into: it has no file')
      await backupOnThread(file, target)
    },
    rowsCopyable: true,
  }
}
