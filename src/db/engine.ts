import type { DialectAdapter, Kysely, Transaction } from 'kysely'
import type { BusLog, EventBus, MessageFormat } from '../lib/event-bus.ts'
import type { DB } from './database.ts'
import type { Writer } from './writer.ts'

// The engine port: everything that differs between the engines statusd runs on, named once.
// Each engine implements `Engine` in its own folder (sqlite/, postgres/) and has one line in
// the registry (engines.ts); every member is required, so an engine that lacks one does not
// compile. Code outside src/db/ sees a `Database` and the functions of this folder, never
// which engine it runs on.

/** What an error means for storage; anything else is a bug (500). */
export type StorageErrorKind =
  /** Storage cannot serve right now (down, busy, full, unreachable): 503, retry later. */
  | 'unavailable'
  /** Text the engine cannot store (PostgreSQL refuses NUL, 22021): the request's fault, 400. */
  | 'unstorable'
  /** The database as set up refuses statusd (no such database or schema, a login or privilege refused). */
  | 'setup'

/**
 * Why storage refused a write, where it says so: it is full (disk, quota), or it takes no
 * writes at all (a read-only file, file system or server). Such an error is also
 * 'unavailable' (503); /readyz reports it until a write succeeds again.
 */
export type WriteRefusal = 'full' | 'readOnly'

/** A query that can lock the rows it reads until its transaction ends (`select … for update`). */
export interface RowLockable<Q> {
  forUpdate(): Q
}

/** A query that can lock the rows it reads and pass over rows others hold (`… skip locked`). */
export interface RowClaimable<Q> extends RowLockable<Q> {
  skipLocked(): Q
}

/** A table being created (Kysely's schema builder), whatever its columns. */
type NewTable = import('kysely').CreateTableBuilder<string, string>

/**
 * What statusd's schema needs that differs by engine. The tables are written once, with
 * Kysely's schema builder, in migrations/; they reach these through `migrationSteps(db)`
 * (engines.ts).
 */
export interface MigrationSteps {
  /**
   * The schema the migrator keeps its bookkeeping tables in, where the engine has schemas
   * (migrate.ts); undefined where it has none.
   */
  bookkeepingSchema(db: Kysely<unknown>): Promise<string | undefined>
  /**
   * Makes a table stored in its primary key's order (SQLite: WITHOUT ROWID), for the tables
   * read by ranges of their key; undefined where the engine keeps every table in a heap
   * beside its key's index (PostgreSQL). An index a table is read by in another order then
   * carries the columns those reads show (docs/decisions/0009-clustered-tables.md).
   */
  readonly keyOrderedTable: (<T extends NewTable>(table: T) => T) | undefined
  /**
   * Makes (up) or drops (down) what only the engine's own parts use, once statusd's tables
   * exist: the column that orders `outbox_events` by commit for its `OutboxTail`, and the
   * table its `RequestCounter` counts in. Where the engine has neither, `outbox_events.tx_id`
   * is still there, always null, so that `statusd copy` moves the table like any other.
   */
  engineSchema(db: Kysely<unknown>, direction: 'up' | 'down'): Promise<void>
}

/** How `statusd copy` (copy.ts) treats a URL of the engine, as source or as target. */
export interface CopySupport {
  /**
   * A copy's source, before it is opened: why it is refused (nothing there: a typo must not
   * create an empty database; not a database of this engine), or the options it is opened with.
   */
  source(url: string): { refused: string } | { options: DatabaseOptions }
  /**
   * Called before a copy's target is opened; the function it returns removes what opening
   * the target created (a new, empty file), for a copy that did not happen.
   */
  discardNewTarget(url: string): () => void
}

/** One engine statusd runs on. */
export interface Engine {
  /** Its name in the registry, in logs and in tests. */
  readonly name: string
  /** The URL forms it opens, for messages (`sqlite:<path>`). */
  readonly urlForms: readonly string[]
  /** True when a `DATABASE_URL` names a database of this engine (by its scheme). */
  recognizes(url: string): boolean
  /**
   * What is wrong with a URL it recognizes, in one line that does not echo the URL (it may
   * hold a password); undefined when it can be opened.
   */
  problemWithUrl(url: string): string | undefined
  /** The URL as it may be logged and printed: without its password. */
  redactUrl(url: string): string
  /** Opens the database the URL names; nothing connects before the first query. */
  open(url: string, options: DatabaseOptions): Database
  /** True when Kysely's adapter is this engine's: how a transaction finds its engine. */
  ownsAdapter(adapter: DialectAdapter): boolean
  /**
   * The query, made to lock the rows it reads until the transaction ends where writers
   * can overlap (`for update`): a row read to be written stays as read until the write lands.
   */
  lockRows<Q extends RowLockable<Q>>(query: Q): Q
  /**
   * The query, made to claim the rows it reads where several instances can read at once
   * (`for update skip locked`): rows another transaction holds are passed over, not waited
   * for, so each instance takes different rows of a queue.
   */
  claimRows<Q extends RowClaimable<Q>>(query: Q): Q
  /**
   * Holds a named lock until `tx` ends, so that transactions taking the same name run one
   * after another, across every process on the database.
   */
  advisoryLock(tx: Transaction<DB>, name: string): Promise<void>
  /** What one error (not its causes: storage-error.ts walks them) means for storage. */
  classifyError(err: { code?: unknown; message?: unknown }): StorageErrorKind | undefined
  /** Whether one error (not its causes) says storage refuses writes, and why. */
  writeRefusal(err: { code?: unknown; message?: unknown }): WriteRefusal | undefined
  readonly migrationSteps: MigrationSteps
  readonly copy: CopySupport
}

/** What a database needs to open an event bus for one kind of message. */
export interface EventBusOptions<M> extends MessageFormat<M> {
  /**
   * A kind of message other than status changes (a few lower-case letters): its own channel
   * between instances, so neither bus hears the other's messages. Default: status changes.
   */
  channel?: string
  log: BusLog
  /** Called when a listener throws; the other listeners still get the message. */
  onListenerError?: (err: unknown) => void
}

/** A storage gauge `/metrics` reports (read at every scrape). */
export interface StorageGauge {
  name: string
  help: string
  read(): number
}

/** An open database, whatever its engine. */
export interface Database {
  db: Kysely<DB>
  /** The engine's name, for logs and tests; code asks the engine port, never this. */
  engine: string
  /**
   * How services commit their writes: the engine's best way (group commit where every
   * commit costs an fsync, one transaction per write where commits run in parallel).
   */
  writer: Writer
  /** Where the data lives, without credentials: safe to log. */
  describe: string
  /** True when storage answers a trivial query. */
  ping(): Promise<boolean>
  /**
   * Commits a small write that changes nothing statusd reads, through the writer: how
   * /readyz learns whether storage that refused writes takes them again. Rejects as the
   * write does.
   */
  probeWrite(): Promise<void>
  /** What `/metrics` reports about the storage (file sizes); may be none. */
  gauges: readonly StorageGauge[]
  /**
   * How many bytes the database takes where it is stored (the operators' instance page,
   * docs/operations.md#operators); absent where it cannot be told.
   */
  sizeBytes?(): Promise<number>
  /**
   * The most connections storage opens as requests need them (a pool's size); absent: none,
   * everything storage uses is open from the start. The server leaves that many descriptors
   * to storage when it sets its stream capacity (docs/operations.md#server-wide-stream-capacity).
   */
  pooledConnections?: number
  /**
   * Opens the bus on which committed writes reach live streams: between every instance on
   * the database where several can share it, else in process. The caller closes it.
   */
  openEventBus<M>(options: EventBusOptions<M>): Promise<EventBus<M>>
  /**
   * Reads the status events (outbox rows) every instance committed, in commit order, where
   * several instances share the database (PostgreSQL); undefined where one process is all
   * there is (SQLite: its bus already hands every change to every stream).
   */
  outboxTail: OutboxTail | undefined
  /**
   * Where the per-user request limit counts when several instances share the database (one
   * count for all of them, docs/postgres.md#scaling-out-behind-a-load-balancer); null where
   * one process uses it (SQLite), which counts in its own memory.
   */
  requestCounter: RequestCounter | null
  close(): Promise<void>
}

/** Counts requests per key in windows every instance on the database shares. */
export interface RequestCounter {
  /**
   * Counts one request of `key` in its current window (one that starts with the first
   * request after the last window of `windowMs` ended): the count so far, this one included,
   * and the milliseconds left until the window ends. One statement, one round trip.
   */
  hit(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }>
}

/**
 * The outbox read in the order its events committed, for live updates between instances
 * (docs/postgres.md#live-updates-across-instances). Positions are opaque text.
 */
export interface OutboxTail {
  /** A position every event that commits from now on is at or after: where a reader starts. */
  start(): Promise<string>
  /**
   * What committed from `from` on. `next` is where the next read starts: everything before
   * it has been read for good; what comes after it may be read again (read it as news only
   * when it is: a status at a version the reader has is not).
   */
  read(
    from: string,
    types: readonly string[],
    limit: number,
    /**
     * Only these statuses (those the reader has streams on), so that `limit` counts only
     * changes the reader can use, however many other statuses change; all when omitted.
     */
    statusIds?: readonly string[],
  ): Promise<OutboxTailPage>
}

export interface OutboxTailPage {
  /** The statuses events of the asked types were recorded for, with their current version (null: gone). */
  changed: Array<{ statusId: string; version: number | null; types: string[] }>
  /** False when more than `limit` statuses changed: `changed` lists only some of them. */
  complete: boolean
  /**
   * True when `from` was not taken on the server that answered (a failover to a standby, a
   * restart): nothing is listed (`complete` is false) and `next` is a position on this
   * server. Whatever committed here before it may not have been read: read every status again.
   */
  restarted: boolean
  /** Where the next read starts. */
  next: string
}

/**
 * How long a SQLite write waits for a lock another process holds (the admin CLI, a backup).
 * note: better-sqlite3 is synchronous, so the whole event loop waits with it — every other
 * request and the health checks too. A second rides out the CLI's millisecond transactions;
 * a lock held longer answers 503 with Retry-After rather than freezing the server for long.
 */
export const DEFAULT_BUSY_TIMEOUT_MS = 1000

/** Connections per instance when `DATABASE_POOL_SIZE` is not set. */
export const DEFAULT_POOL_SIZE = 10

/** How a database is opened; an engine ignores what does not apply to it. */
export interface DatabaseOptions {
  /** Most connections a pool opens (`DATABASE_POOL_SIZE`; PostgreSQL). */
  poolSize?: number
  /** How long a query waits for a pooled connection before it fails (503; PostgreSQL). */
  connectTimeoutMs?: number
  /**
   * PostgreSQL: where the event bus's LISTEN connections go (`DATABASE_LISTEN_URL`), when the
   * pool's URL cannot keep a session (a transaction-pooling PgBouncer). Default: the pool's URL.
   */
  listenUrl?: string
  /** How long a write waits for another process's lock (SQLite: DEFAULT_BUSY_TIMEOUT_MS). */
  busyTimeoutMs?: number
  /**
   * SQLite: how often checkpoints run and how far the log may grow before it must restart
   * (sqlite/sqlite-durability.ts; the defaults suit every deployment, tests use small ones),
   * and who hears of a checkpoint that failed (`onError`: the server logs it).
   */
  checkpoints?: {
    onError?: (error: Error) => void
    /** Units committed between two checkpoints under load. */
    checkpointEvery?: number
    /** Log size, in frames, past which a batch waits for the log to restart. */
    restartFrames?: number
  }
  /**
   * SQLite: open the file read-only, as it is (no switch to WAL mode, no checkpoints): for
   * reading a file that must not change, e.g. a `VACUUM INTO` backup as a copy's source.
   */
  readOnly?: boolean
  /**
   * SQLite in memory (`sqlite::memory:`): what the database starts as, a copy of a database
   * file's bytes (a `VACUUM INTO` of a migrated one: tests copy it into each app instead of
   * migrating each).
   */
  memoryImage?: Buffer
}
