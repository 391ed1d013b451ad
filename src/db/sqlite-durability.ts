import type { Worker } from 'node:worker_threads'
import { CompiledQuery, type Kysely } from 'kysely'
import { startCheckpointThread } from './checkpoint-worker.ts'
import type { DB } from './database.ts'
import type { BatchHooks } from './group-commit.ts'
import { walSyncer } from './wal-sync.ts'

/**
 * How a file-backed SQLite database keeps group-committed writes durable without blocking the
 * event loop (docs/performance.md, "Durability and group commit").
 *
 * - The connection runs at `synchronous=FULL`, so every write outside group commit (the admin
 *   commands, key and user changes) is fsynced by SQLite at its commit, as before.
 * - A group-commit batch runs at `synchronous=NORMAL`: its COMMIT writes the log without an
 *   fsync, and the batch's units settle only after an fdatasync of the `-wal` file, done on
 *   libuv's thread pool (wal-sync.ts). An acknowledged write is durable exactly as at FULL,
 *   while the event loop runs the next batch.
 * - Checkpoints (copying the log into the database file, with their fsyncs) run on a worker
 *   thread with its own connection (checkpoint-worker.ts); the main connection never
 *   checkpoints by itself (`wal_autocheckpoint=0`). A checkpoint runs alongside the writes
 *   after every CHECKPOINT_EVERY units. When the log has grown past RESTART_FRAMES, because
 *   writes never paused long enough for a checkpoint to finish, the next checkpoint runs
 *   between two batches, so that the log restarts from its beginning.
 */
export interface SqliteDurability extends BatchHooks {
  /** Stops the checkpoint thread; call before closing the main connection. */
  close(): Promise<void>
}

const CHECKPOINT_EVERY = 512
const RESTART_FRAMES = 8192 // 32 MiB of 4 KiB pages
const IDLE_CHECKPOINT_MS = 1000

const SYNCHRONOUS_NORMAL = CompiledQuery.raw('pragma synchronous = NORMAL')
const SYNCHRONOUS_FULL = CompiledQuery.raw('pragma synchronous = FULL')
const CHECKPOINT_HERE = CompiledQuery.raw('pragma wal_checkpoint(PASSIVE)')

interface CheckpointResult {
  ok: boolean
  log?: number
  checkpointed?: number
  message?: string
}

export function sqliteDurability(
  file: string,
  options: { onError?: (error: Error) => void } = {},
): SqliteDurability {
  const wal = walSyncer(`${file}-wal`)
  let closed = false
  let worker: Worker | undefined
  let workerFailed = false
  let waiting: ((result: CheckpointResult) => void)[] = []
  let running: Promise<CheckpointResult> | undefined
  let unitsSince = 0
  let logFrames = 0
  let idleTimer: NodeJS.Timeout | undefined

  function failWorker(error: Error) {
    if (workerFailed) return
    workerFailed = true
    options.onError?.(error)
    for (const done of waiting) done({ ok: false, message: error.message })
    waiting = []
  }

  function startWorker(): Worker {
    const started = startCheckpointThread(file)
    started.unref()
    started.on('message', (result: CheckpointResult) => {
      waiting.shift()?.(result)
    })
    started.on('error', (error) => failWorker(error))
    started.on('exit', (code) => {
      if (worker === started && code !== 0)
        failWorker(new Error(`checkpoint thread exited (${code})`))
    })
    return started
  }

  /** Asks the checkpoint thread for a checkpoint; resolves when it is done. */
  function checkpoint(): Promise<CheckpointResult> {
    if (running) return running
    if (closed) return Promise.resolve({ ok: true })
    unitsSince = 0
    worker ??= startWorker()
    const current = new Promise<CheckpointResult>((resolve) => {
      waiting.push(resolve)
      worker?.postMessage('checkpoint')
    }).then((result) => {
      running = undefined
      // note: a log copied in full starts over at the next write
      if (result.ok) logFrames = result.checkpointed === result.log ? 0 : (result.log ?? 0)
      else options.onError?.(new Error(`checkpoint failed: ${result.message}`))
      return result
    })
    running = current
    return current
  }

  return {
    enter: SYNCHRONOUS_NORMAL,
    leave: SYNCHRONOUS_FULL,

    async beforeBatch(connection: Kysely<DB>) {
      if (workerFailed) {
        // note: without its thread, the main connection checkpoints as SQLite would by itself
        if (unitsSince >= CHECKPOINT_EVERY) {
          unitsSince = 0
          await connection.executeQuery(CHECKPOINT_HERE)
        }
        return
      }
      if (logFrames >= RESTART_FRAMES) {
        // the log keeps growing: let a checkpoint finish with no write in between
        await checkpoint()
      } else if (unitsSince >= CHECKPOINT_EVERY) {
        void checkpoint()
      }
    },

    afterCommit(units: number) {
      unitsSince += units
      // once writes stop, what they left in the log is copied too
      if (idleTimer) idleTimer.refresh()
      else {
        idleTimer = setTimeout(() => {
          if (unitsSince > 0 && !workerFailed && !closed) void checkpoint()
        }, IDLE_CHECKPOINT_MS)
        idleTimer.unref()
      }
      return wal.sync()
    },

    async close() {
      closed = true
      clearTimeout(idleTimer)
      await wal.close()
      await running
      const stopping = worker
      worker = undefined
      if (!stopping) return
      await new Promise<void>((resolve) => {
        stopping.once('exit', () => resolve())
        stopping.postMessage('close')
      })
    },
  }
}
