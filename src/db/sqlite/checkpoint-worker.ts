import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/**
 * The checkpoint thread of a SQLite database (see sqlite-durability.ts). It has its own
 * connection and copies the write-ahead log into the database file whenever the main thread
 * asks, so that the copying and the fsyncs of a checkpoint never block the event loop.
 *
 * note: this function's source runs as the thread's whole program (an `eval` worker): plain
 * JavaScript with nothing to import, so the thread loads no TypeScript support (about half
 * the memory of a worker started from a .ts file; docs/decisions/0014-memory-under-load.md).
 */
function checkpointThread(require: NodeJS.Require): void {
  const { parentPort, workerData } = require('node:worker_threads')
  const { file, driver } = workerData as { file: string; driver: string }
  const SQLite = require(driver) as typeof import('better-sqlite3')
  const db = new SQLite(file)
  // note: in WAL mode a checkpoint syncs the log before copying and the database after, at
  // NORMAL as at FULL; this connection writes nothing else
  db.pragma('synchronous = NORMAL')
  db.pragma('wal_autocheckpoint = 0')

  parentPort?.on('message', (message: 'checkpoint' | 'close') => {
    if (message === 'close') {
      db.close()
      parentPort.close()
      return
    }
    try {
      // PASSIVE: copies what no reader still needs, without taking the writer's lock
      const [result] = db.pragma('wal_checkpoint(PASSIVE)') as {
        busy: number
        log: number
        checkpointed: number
      }[]
      parentPort.postMessage({
        ok: true,
        log: result?.log ?? 0,
        checkpointed: result?.checkpointed ?? 0,
      })
    } catch (error) {
      parentPort.postMessage({ ok: false, message: (error as Error).message })
    }
  })
}

/** Starts the checkpoint thread of the database `file`. */
export function startCheckpointThread(file: string): Worker {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  return new Worker(`(${checkpointThread.toString()})(require)`, {
    eval: true,
    workerData: { file, driver },
  })
}
