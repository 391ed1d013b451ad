import type { Worker } from 'node:worker_threads'
import { CompiledQuery, type Kysely } from 'kysely'
import type { DB } from '../database.ts'
import type { BatchHooks } from '../group-commit.ts'
import { startCheckpointThread } from './checkpoint-worker.ts'
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
 *   after every CHECKPOINT_EVERY units.
 * - SQLite writes the log from its beginning again (instead of appending) only when a write
 *   transaction begins after a checkpoint has copied the whole log. Under steady writes a
 *   batch always commits while the checkpoint runs, so the log would grow without end
 *   (docs/decisions/0004-checkpoint-cadence.md). So when a checkpoint reports a log of
 *   RESTART_FRAMES or more that it could not leave empty, the next batch waits for a
 *   checkpoint with no write in between, and the log restarts at its first write.
 * - That wait lasts as long as the checkpoint: copying the frames logged since the last one
 *   and an fsync of the database file, long with a large database on a slow disk when
 *   checkpoints run every CHECKPOINT_EVERY units. So once the log comes within an eighth of
 *   RESTART_FRAMES, checkpoints run every NEAR_RESTART_EVERY units instead, and the last one
 *   before the restart has little left to copy. The price: with a small database,
 *   checkpoints that often copy the same hot pages again and again, some CPU per write.
 */
export interface SqliteDurability extends BatchHooks {
  /** Stops the checkpoint thread; call before closing the main connection. */
  close(): Promise<void>
}

const CHECKPOINT_EVERY = 512
const NEAR_RESTART_EVERY = 32
const RESTART_FRAMES = 16384 // 64 MiB of 4 KiB pages
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

export interface SqliteDurabilityOptions {
  onError?: (error: Error) => void
  /** Units committed between two checkpoints under load (default CHECKPOINT_EVERY). */
  checkpointEvery?: number
  /** Log size, in frames, past which a batch waits for the log to restart (default RESTART_FRAMES). */
  restartFrames?: number
}

export function sqliteDurability(
  file: string,
  options: SqliteDurabilityOptions = {},
): SqliteDurability {
  const checkpointEvery = options.checkpointEvery ?? CHECKPOINT_EVERY
  const restartFrames = options.restartFrames ?? RESTART_FRAMES
  const nearRestartFrames = restartFrames - restartFrames / 8
  const wal = walSyncer(`${file}-wal`)
  let closed = false
  let worker: Worker | undefined
  /** Resolves once the checkpoint thread has ended, however it ended (its `exit` fires once). */
  let workerExited: Promise<void> = Promise.resolve()
  let workerFailed = false
  let waiting: ((result: CheckpointResult) => void)[] = []
  let running: Promise<CheckpointResult> | undefined
  let unitsSince = 0
  /** Units committed since the start, to tell whether one committed while a checkpoint ran. */
  let unitsCommitted = 0
  /** The log's size at the last checkpoint, in frames; 0 once it will restart at the next write. */
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
    workerExited = new Promise((resolve) => started.once('exit', () => resolve()))
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
    const committedBefore = unitsCommitted
    const current = new Promise<CheckpointResult>((resolve) => {
      waiting.push(resolve)
      worker?.postMessage('checkpoint')
    }).then((result) => {
      running = undefined
      if (result.ok) {
        // note: the log starts over at the next write only if this checkpoint copied all of it
        // and no batch committed meanwhile: that batch's frames are past the copied end, and
        // the log keeps growing after them
        const restarts = result.checkpointed === result.log && unitsCommitted === committedBefore
        logFrames = restarts ? 0 : (result.log ?? 0)
      } else options.onError?.(new Error(`checkpoint failed: ${result.message}`))
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
        if (unitsSince >= checkpointEvery) {
          unitsSince = 0
          await connection.executeQuery(CHECKPOINT_HERE)
        }
        return
      }
      if (logFrames >= restartFrames) {
        // the log keeps growing: let a checkpoint finish with no write in between (after the
        // one under way, which batches overlapped)
        if (running) await running
        if (logFrames >= restartFrames) await checkpoint()
      } else if (
        unitsSince >= (logFrames >= nearRestartFrames ? NEAR_RESTART_EVERY : checkpointEvery)
      ) {
        void checkpoint()
      }
    },

    afterCommit(units: number) {
      unitsSince += units
      unitsCommitted += units
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
      // note: a thread that failed (it could not open the file) has ended already, and its
      // `exit` is not emitted again: waiting for a new one kept close() waiting for ever
      // note: the thread is unref'd so that it never keeps a process alive; while close()
      // waits for it to end it must, or a process with nothing else to do exits before the
      // thread's `exit` arrives and the close never finishes
      stopping.ref()
      stopping.postMessage('close')
      await workerExited
    },
  }
}
