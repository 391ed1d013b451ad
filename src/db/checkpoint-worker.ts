// The checkpoint thread of a SQLite database (see sqlite-durability.ts). It has its own
// connection and copies the write-ahead log into the database file whenever the main thread
// asks, so that the copying and the fsyncs of a checkpoint never block the event loop.
import { parentPort, workerData } from 'node:worker_threads'
import SQLite from 'better-sqlite3'

const { file } = workerData as { file: string }
const port = parentPort
if (!port) throw new Error('checkpoint-worker.ts runs as a worker thread')

const db = new SQLite(file)
// note: in WAL mode a checkpoint syncs the log before copying and the database after, at
// NORMAL as at FULL; this connection writes nothing else
db.pragma('synchronous = NORMAL')
db.pragma('wal_autocheckpoint = 0')

port.on('message', (message: 'checkpoint' | 'close') => {
  if (message === 'close') {
    db.close()
    port.close()
    return
  }
  try {
    // PASSIVE: copies what no reader still needs, without taking the writer's lock
    const [result] = db.pragma('wal_checkpoint(PASSIVE)') as {
      busy: number
      log: number
      checkpointed: number
    }[]
    port.postMessage({ ok: true, log: result?.log ?? 0, checkpointed: result?.checkpointed ?? 0 })
  } catch (error) {
    port.postMessage({ ok: false, message: (error as Error).message })
  }
})
