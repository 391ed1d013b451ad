import type BetterSqlite3 from 'better-sqlite3'
import { InProcessEventBus, type InProcessEventBusOptions } from '../../lib/event-bus.ts'

/**
 * How often a SQLite server looks for commits of other processes: a credential changed by the
 * CLI is refused within this, well inside the second docs/api.md#authentication promises.
 */
export const OTHER_COMMITS_INTERVAL_MS = 250

/**
 * Notices commits another process (the admin CLI) made to the database, by SQLite's own
 * counter: `PRAGMA data_version` changes when, and only when, another connection committed
 * since this one last asked (never for this connection's own commits). One pragma every
 * `intervalMs` — no table, no write — and only while someone listens.
 */
export class OtherCommits {
  readonly #sqlite: BetterSqlite3.Database
  readonly #intervalMs: number
  readonly #listeners = new Set<() => void>()
  #version = 0
  #timer: NodeJS.Timeout | undefined

  constructor(sqlite: BetterSqlite3.Database, intervalMs = OTHER_COMMITS_INTERVAL_MS) {
    this.#sqlite = sqlite
    this.#intervalMs = intervalMs
  }

  /** Calls `listener` after every look that found another process's commit; until the returned function is called. */
  listen(listener: () => void): () => void {
    this.#listeners.add(listener)
    if (!this.#timer) {
      this.#version = this.#read()
      this.#timer = setInterval(() => this.check(), this.#intervalMs)
      // note: never keeps the process alive on its own
      this.#timer.unref()
    }
    return () => {
      this.#listeners.delete(listener)
      if (this.#listeners.size === 0) this.close()
    }
  }

  /** Looks now (the timer calls it). */
  check(): void {
    let version: number
    try {
      version = this.#read()
    } catch {
      // the connection closed under us: nothing left to watch
      this.close()
      return
    }
    if (version === this.#version) return
    this.#version = version
    for (const listener of [...this.#listeners]) listener()
  }

  close(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }

  #read(): number {
    return Number(this.#sqlite.pragma('data_version', { simple: true }))
  }
}

/**
 * The bus of a SQLite server: in process (one process serves the database), with a resync
 * whenever another process committed — what it changed was announced to nobody, so listeners
 * re-read what they hold (a key the CLI revoked is forgotten, its streams checked).
 */
export class SqliteEventBus<M> extends InProcessEventBus<M> {
  readonly #others: OtherCommits
  readonly #stops: (() => void)[] = []

  constructor(options: InProcessEventBusOptions<M>, others: OtherCommits) {
    super(options)
    this.#others = others
  }

  onResync(listener: () => void): void {
    this.#stops.push(this.#others.listen(listener))
  }

  override async close(): Promise<void> {
    for (const stop of this.#stops.splice(0)) stop()
    await super.close()
  }
}
