import { close as closeFd, fdatasync, openSync } from 'node:fs'

/**
 * Makes what SQLite has written to its write-ahead log durable, off the event loop: an
 * fdatasync of the `-wal` file on libuv's thread pool. Calls that arrive while a sync runs
 * share the next one (never the running one: it may have started before their commit's
 * write), so at most two syncs are ever in flight or waiting.
 *
 * note: fdatasync flushes the file (the inode), whichever descriptor asks, so our own
 * read-only descriptor covers the frames SQLite wrote through its own. SQLite never deletes
 * or replaces the `-wal` file while a connection to the database is open; a checkpoint that
 * restarts the log rewrites it in place.
 */
export interface WalSyncer {
  /** Resolves once everything written to the log before the call is on disk. */
  sync(): Promise<void>
  /** Waits for the syncs under way, then lets the file go. */
  close(): Promise<void>
}

export function walSyncer(walPath: string): WalSyncer {
  let fd: number | undefined
  let running: Promise<void> | undefined
  let next: Promise<void> | undefined

  const syncOnce = () =>
    new Promise<void>((resolve, reject) => {
      fd ??= openSync(walPath, 'r')
      fdatasync(fd, (error) => (error ? reject(error) : resolve()))
    })

  const start = (): Promise<void> => {
    const sync = syncOnce()
    running = sync
    const done = () => {
      if (running === sync) running = undefined
    }
    sync.then(done, done)
    return sync
  }

  const sync = (): Promise<void> => {
    if (running === undefined) return start()
    // note: the waiters share one sync that starts once the running one ends, whatever its outcome
    next ??= running
      .catch(() => {})
      .then(() => {
        next = undefined
        return start()
      })
    return next
  }

  return {
    sync,
    async close() {
      await (next ?? running)?.catch(() => {})
      if (fd !== undefined) closeFd(fd, () => {})
      fd = undefined
    },
  }
}
