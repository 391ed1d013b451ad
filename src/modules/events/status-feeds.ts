import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB, StatusRow } from '../../db/database.ts'
import { ownerPlanOf } from '../history/history.service.ts'
import type { Plans } from '../plans/plans.ts'
import { toShareView } from '../sharing/share-view.ts'
import { roleHolderIds } from '../sharing/sharing.repository.ts'
import { findStatusById } from '../statuses/statuses.repository.ts'
import { toStatus } from '../statuses/statuses.service.ts'
import type { EventBus, StatusChange } from './event-bus.ts'
import type { SseStream } from './sse.ts'

/** Who watches: an anonymous share-page viewer, or an authenticated user. */
export type Viewer = { kind: 'share' } | { kind: 'user'; userId: string }

interface Client {
  stream: SseStream
  viewer: Viewer
  /** The version the client last got (or said it had, with Last-Event-ID); -1: none yet. */
  lastSent: number
  /** The Last-Event-ID it connected with; only its first delivery looks at it. */
  resumeFrom: number | null
  first: boolean
}

/** The state of a status at one version, and its frames, rendered at most once per kind. */
class Snapshot {
  readonly row: StatusRow
  readonly version: number
  #statusJson: string | undefined
  #shareJson: Promise<string> | undefined
  #roleHolders: Promise<Set<string>> | undefined
  readonly #deps: FeedDeps

  constructor(row: StatusRow, deps: FeedDeps) {
    this.row = row
    this.version = Number(row.version)
    this.#deps = deps
  }

  statusJson(): string {
    this.#statusJson ??= JSON.stringify(toStatus(this.row))
    return this.#statusJson
  }

  /** The share view needs the owner's plan (description links): read once, on demand. */
  shareJson(): Promise<string> {
    this.#shareJson ??= ownerPlanOf(this.#deps.db, this.#deps.plans, this.row).then((plan) =>
      JSON.stringify(toShareView(this.row, plan)),
    )
    return this.#shareJson
  }

  /** May this viewer see the status at this version? Role holders are read once, on demand. */
  async visibleTo(viewer: Viewer): Promise<boolean> {
    if (this.row.access_type === 'public') return true
    if (viewer.kind === 'share') return false
    if (viewer.userId === this.row.owner_id) return true
    this.#roleHolders ??= roleHolderIds(this.#deps.db, this.row.id).then((ids) => new Set(ids))
    return (await this.#roleHolders).has(viewer.userId)
  }
}

interface FeedDeps {
  db: Kysely<DB>
  plans: Plans
  events: EventBus
  log: FastifyBaseLogger
}

/**
 * The live streams of one status on this instance. It listens to the bus once, however many
 * clients there are, and answers each change with one read of the row, fanned out to all.
 * Changes that arrive while a read is running coalesce into one more read, so a burst of
 * writes costs at most two reads, and writers never wait for readers.
 */
class Feed {
  readonly statusId: string
  readonly clients = new Set<Client>()
  readonly #deps: FeedDeps
  readonly #unsubscribe: () => void
  #loadedVersion = 0
  #loading = false
  #again = false

  constructor(statusId: string, deps: FeedDeps) {
    this.statusId = statusId
    this.#deps = deps
    this.#unsubscribe = deps.events.subscribe(statusId, (change) => this.#onChange(change))
  }

  #onChange(change: StatusChange): void {
    if (change.kind === 'deleted') {
      for (const client of this.clients) gone(client, 'deleted', change.version)
      return
    }
    // 'access' (a role revoked) re-reads even at the same version: visibility may differ
    if (change.kind === 'status' && change.version <= this.#loadedVersion) return
    this.refresh()
  }

  /** Reads the current state and delivers it to every client (coalescing concurrent calls). */
  refresh(): void {
    if (this.#loading) {
      this.#again = true
      return
    }
    this.#loading = true
    void this.#run()
  }

  async #run(): Promise<void> {
    try {
      do {
        this.#again = false
        const snapshot = await this.load()
        if (!snapshot) {
          for (const client of this.clients) gone(client, 'deleted', this.#loadedVersion + 1)
          return
        }
        this.#loadedVersion = Math.max(this.#loadedVersion, snapshot.version)
        await Promise.all([...this.clients].map((client) => deliver(client, snapshot)))
      } while (this.#again && this.clients.size > 0)
    } catch (err) {
      // note: the clients reconnect with Last-Event-ID and get the current state then
      this.#deps.log.error({ err, statusId: this.statusId }, 'live update failed; closing streams')
      for (const client of this.clients) client.stream.close()
    } finally {
      this.#loading = false
    }
  }

  async load(): Promise<Snapshot | undefined> {
    const row = await findStatusById(this.#deps.db, this.statusId)
    return row ? new Snapshot(row, this.#deps) : undefined
  }

  stop(): void {
    this.#unsubscribe()
  }
}

/** Sends the snapshot to one client if it is news to them, or ends the stream if it is hidden. */
async function deliver(client: Client, snapshot: Snapshot): Promise<void> {
  if (client.stream.closed) return
  if (!(await snapshot.visibleTo(client.viewer))) {
    gone(client, 'notVisible', snapshot.version)
    return
  }
  if (client.first) {
    client.first = false
    // a client that resumes at the current version is up to date; any other id gets the state
    if (client.resumeFrom === snapshot.version) {
      client.lastSent = snapshot.version
      return
    }
  } else if (snapshot.version <= client.lastSent) return
  const data = client.viewer.kind === 'share' ? await snapshot.shareJson() : snapshot.statusJson()
  if (client.stream.closed || snapshot.version <= client.lastSent) return
  client.lastSent = snapshot.version
  client.stream.send('status', snapshot.version, data)
}

/** The status is gone for this client (deleted, or no longer visible): say why, then end. */
function gone(client: Client, reason: 'deleted' | 'notVisible', version: number): void {
  if (client.stream.closed) return
  client.stream.send('unavailable', version, JSON.stringify({ reason }))
  client.stream.close()
}

/**
 * Every live stream of this instance, grouped by status. Streams are attached by the
 * events routes after their access checks; a feed exists while its status has viewers here.
 */
export class StatusFeeds {
  readonly #feeds = new Map<string, Feed>()
  readonly #deps: FeedDeps
  #closed = false

  constructor(deps: FeedDeps) {
    this.#deps = deps
  }

  /**
   * Attaches a stream to a status and sends it the current state (unless it resumes at the
   * current version). The stream detaches itself when it closes, for whatever reason.
   */
  async attach(
    statusId: string,
    stream: SseStream,
    viewer: Viewer,
    resumeFrom: number | null,
  ): Promise<void> {
    if (this.#closed) return stream.close()
    let feed = this.#feeds.get(statusId)
    if (!feed) {
      feed = new Feed(statusId, this.#deps)
      this.#feeds.set(statusId, feed)
    }
    const client: Client = { stream, viewer, lastSent: -1, resumeFrom, first: true }
    feed.clients.add(client)
    const attached = feed
    stream.onClose(() => {
      attached.clients.delete(client)
      if (attached.clients.size === 0 && this.#feeds.get(statusId) === attached) {
        attached.stop()
        this.#feeds.delete(statusId)
      }
    })
    // note: attached before this read, so a change committed meanwhile is not missed; the
    // version check in deliver() keeps the order right whichever arrives first
    try {
      const snapshot = await attached.load()
      if (!snapshot) gone(client, 'deleted', 0)
      else await deliver(client, snapshot)
    } catch (err) {
      this.#deps.log.error({ err, statusId }, 'could not start a live stream')
      stream.close()
    }
  }

  /** Every feed re-reads its status (after the bus lost changes, e.g. on a reconnect). */
  refreshAll(): void {
    for (const feed of this.#feeds.values()) feed.refresh()
  }

  /** Ends every stream (at shutdown: open streams would otherwise hold the server open). */
  closeAll(): void {
    this.#closed = true
    for (const feed of [...this.#feeds.values()])
      for (const client of [...feed.clients]) client.stream.close()
  }

  /** Open streams on a status on this instance (for tests and metrics). */
  clientCount(statusId: string): number {
    return this.#feeds.get(statusId)?.clients.size ?? 0
  }
}
