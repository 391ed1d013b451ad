import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB, StatusRow } from '../../db/database.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import { encodeEvent, SseFrame, type SseStream } from '../../lib/sse.ts'
import type { Plans } from '../plans/plans.ts'
import { shareViewOf } from '../statuses/share.service.ts'
import { validLinkIds } from '../statuses/share-links.service.ts'
import { roleHolders } from '../statuses/sharing.service.ts'
import type { StatusChange, StatusEventBus } from '../statuses/status-events.ts'
import { findStatusAndSubscribers, toStatus } from '../statuses/statuses.service.ts'

/**
 * Who watches: an anonymous share-page viewer, the holder of a private share link (which
 * shows the status whatever its accessType, while the link works), or an authenticated user.
 */
export type Viewer =
  | { kind: 'share' }
  | { kind: 'link'; linkId: string; expiresAt: number }
  | { kind: 'user'; userId: string }

/** A status as one kind of viewer reads it at one version: its JSON, and its event. */
export interface Rendered {
  /** The JSON body (a Status, or a share view). */
  json: string
  /** The single-status stream's event of it (`event: status`, `id:` the version). */
  frame: SseFrame
}

/** Why a status is gone for a viewer: deleted, hidden from them, or their link ended. */
export type GoneReason = 'deleted' | 'notVisible' | 'linkEnded'

/**
 * Where one viewer's events of one status go. A single-status stream is one sink; a stream of
 * many statuses (events.routes.ts, the board's stream) has one sink per status on one
 * connection, and a status that is hidden there does not end the others.
 */
export interface FeedSink {
  readonly closed: boolean
  /** The status at `version`, as this viewer reads it. */
  send(version: number, body: Rendered): void
  /**
   * The status is gone for this viewer (`version`: its version then, null when unknown). A
   * single-status stream says why and ends; a many-status one says why and goes on.
   */
  gone(reason: GoneReason, version: number | null): void
  /**
   * Ends the connection (a failure, or shutdown: the client reconnects and resumes); with
   * `reconnectMs`, the client is told to come back after that long (SseStream.close).
   */
  close(reconnectMs?: number): void
  /** Runs `listener` once when the connection ends, however it ends. */
  onClose(listener: () => void): void
}

interface Client {
  sink: FeedSink
  viewer: Viewer
  /** The version the client last got (or said it had, with Last-Event-ID); -1: none yet. */
  lastSent: number
  /** The Last-Event-ID it connected with; only its first delivery looks at it. */
  resumeFrom: number | null
  first: boolean
  /** Told the status is hidden from it (a many-status stream, which stays open). */
  hidden: boolean
}

/** The `unavailable` event that ends a stream, encoded once for every client it ends. */
const unavailableFrame = (reason: 'deleted' | 'notVisible', version: number): SseFrame =>
  encodeEvent('unavailable', version, JSON.stringify({ reason }))

/** One status on its own stream: what the single-status routes attach (a sink per stream). */
export class StreamSink implements FeedSink {
  readonly #stream: SseStream

  constructor(stream: SseStream) {
    this.#stream = stream
  }

  get closed(): boolean {
    return this.#stream.closed
  }

  send(_version: number, body: Rendered): void {
    this.#stream.send(body.frame)
  }

  gone(reason: GoneReason, version: number | null): void {
    if (this.#stream.closed) return
    this.#stream.send(
      reason === 'linkEnded' ? LINK_ENDED_FRAME : unavailableFrame(reason, version ?? 0),
    )
    this.#stream.close()
  }

  close(reconnectMs?: number): void {
    this.#stream.close(reconnectMs)
  }

  onClose(listener: () => void): void {
    this.#stream.onClose(listener)
  }
}

/**
 * The `unavailable` event that ends a stream whose private share link stopped working
 * (revoked or expired). No `id:` line: the status did not change.
 */
const LINK_ENDED_FRAME = new SseFrame(
  `event: unavailable\ndata: ${JSON.stringify({ reason: 'linkEnded' })}\n\n`,
)

/** The state of a status at one version, and its frames, rendered at most once per kind. */
class Snapshot {
  readonly row: StatusRow
  readonly version: number
  #ownerFrame: Rendered | undefined
  #othersFrame: Rendered | undefined
  #shareFrame: Promise<Rendered> | undefined
  #roleHolders: Promise<Set<string>> | undefined
  readonly #deps: FeedDeps

  /** Users holding the subscriber role at this version (`subscriberCount`). */
  readonly #subscribers: number

  constructor(row: StatusRow, deps: FeedDeps, subscribers: number) {
    this.row = row
    this.#subscribers = subscribers
    this.version = Number(row.version)
    this.#deps = deps
  }

  get isPublic(): boolean {
    return this.row.access_type === 'public'
  }

  /** The event for the owner's streams: the Status JSON, the owner's status key in it. */
  ownerFrame(): Rendered {
    this.#ownerFrame ??= this.#statusEvent(this.row.owner_id, this.#subscribers)
    return this.#ownerFrame
  }

  /** The event for other users' streams: the Status JSON as they read it (no status key). */
  othersFrame(): Rendered {
    // note: any reader but the owner gets the same Status (docs/api.md#the-status-object):
    // the subscriber count only when the user list is public (a `private` list's role
    // holders read it with GET)
    this.#othersFrame ??= this.#statusEvent(
      '',
      this.row.access_type_user_list === 'public' ? this.#subscribers : null,
    )
    return this.#othersFrame
  }

  #statusEvent(readerId: string, subscribers: number | null): Rendered {
    const now = (this.#deps.clock ?? systemClock).now()
    return this.#rendered(JSON.stringify(toStatus(this.row, readerId, now, subscribers)))
  }

  #rendered(json: string): Rendered {
    return { json, frame: encodeEvent('status', this.version, json) }
  }

  /** The event for share streams; the share view needs the owner's plan (description links). */
  shareFrame(): Promise<Rendered> {
    this.#shareFrame ??= shareViewOf(this.#deps, this.row).then((view) =>
      this.#rendered(JSON.stringify(view)),
    )
    return this.#shareFrame
  }

  /** Who holds a role on the status (read once, and only for a private status). */
  roleHolders(): Promise<Set<string>> {
    this.#roleHolders ??= roleHolders(this.#deps.db, this.row.id)
    return this.#roleHolders
  }

  /**
   * Everything some set of clients needs to get this snapshot, read and encoded once
   * whatever their number: at most one frame per kind of viewer and one read of the role
   * holders. What a delivery then does per client is synchronous: compare versions, write.
   */
  async prepare(clients: Iterable<Client>): Promise<Delivery> {
    let shareViewers = false
    let owner = false
    let nonOwners = false
    const linkIds = new Set<string>()
    for (const { viewer } of clients) {
      if (viewer.kind === 'share') shareViewers = true
      else if (viewer.kind === 'link') linkIds.add(viewer.linkId)
      else if (viewer.userId === this.row.owner_id) owner = true
      else nonOwners = true
    }
    const isPublic = this.isPublic
    // a share viewer of a private status sees nothing, so no share view is rendered for it;
    // a link's holder sees it while the link works, checked at every change (a revocation
    // anywhere is announced as one: share-links.service.ts revokeShareLink)
    const [share, roleHolders, validLinks] = await Promise.all([
      (shareViewers && isPublic) || linkIds.size > 0 ? this.shareFrame() : undefined,
      nonOwners && !isPublic ? this.roleHolders() : undefined,
      linkIds.size > 0 ? validLinkIds(this.#deps, [...linkIds]) : undefined,
    ])
    return {
      snapshot: this,
      share,
      owner: owner ? this.ownerFrame() : undefined,
      others: nonOwners ? this.othersFrame() : undefined,
      roleHolders,
      validLinks,
    }
  }
}

/** A snapshot made ready for delivery: frames and access facts, resolved once for all. */
interface Delivery {
  snapshot: Snapshot
  /** The share-view event; absent when no share viewer needed it. */
  share: Rendered | undefined
  /** The Status event for the owner; absent when the owner was not watching. */
  owner: Rendered | undefined
  /** The Status event for other users (no status key); absent when none was watching. */
  others: Rendered | undefined
  /** Role holders of a private status; absent for a public one, or when nobody needed them. */
  roleHolders: Set<string> | undefined
  /** The links of the link viewers that still work; absent when there were none. */
  validLinks: Set<string> | undefined
}

/**
 * May this viewer see the status in this delivery? true, false, or undefined when the
 * delivery was prepared without what it takes to know (the client attached after that; its
 * own first read delivers to it).
 */
function visibleIn(delivery: Delivery, viewer: Viewer): boolean | undefined {
  const { snapshot } = delivery
  if (viewer.kind === 'link') return delivery.validLinks?.has(viewer.linkId)
  if (snapshot.isPublic) return true
  if (viewer.kind === 'share') return false
  if (viewer.userId === snapshot.row.owner_id) return true
  return delivery.roleHolders?.has(viewer.userId)
}

interface FeedDeps {
  db: Kysely<DB>
  plans: Plans
  events: StatusEventBus
  log: FastifyBaseLogger
  /** Where private share links' expiries are judged; the system clock when absent. */
  clock?: Clock
  /** How often streams opened through a private share link look for its expiry (ms). */
  linkCheckIntervalMs?: number
}

/** How often link streams look for their link's expiry, unless told otherwise. */
export const LINK_CHECK_INTERVAL_MS = 1_000

/** Resolves in a later turn of the event loop (after pending I/O callbacks and responses). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

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
    this.#unsubscribe = deps.events.subscribe(statusId, (change) => this.changed(change))
  }

  /** A change heard on the bus, or read from the outbox (LiveRelay). */
  changed(change: StatusChange): void {
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
        const delivery = await snapshot.prepare(this.clients)
        // the row and who may see it are two reads: a status deleted between them reads as
        // hidden from everyone but its owner. Before telling anyone it is hidden, its row is
        // read again; gone, every stream hears it was deleted
        if (hidesSomeone(this.clients, delivery) && !(await this.load())) {
          for (const client of this.clients) gone(client, 'deleted', this.#loadedVersion + 1)
          return
        }
        // note: the fan-out waits for the next turn of the event loop, so the response to the
        // write that caused it leaves first: writers never wait for readers (on SQLite the
        // read above finishes in the writer's own turn, before its response is sent)
        await nextTurn()
        // one synchronous pass: per client a version check and one socket write
        for (const client of this.clients) deliver(client, delivery)
      } while (this.#again && this.clients.size > 0)
    } catch (err) {
      // note: the clients reconnect with Last-Event-ID and get the current state then
      this.#deps.log.error({ err, statusId: this.statusId }, 'live update failed; closing streams')
      for (const client of this.clients) client.sink.close()
    } finally {
      this.#loading = false
    }
  }

  async load(): Promise<Snapshot | undefined> {
    const found = await findStatusAndSubscribers(this.#deps.db, this.statusId)
    if (!found) return undefined
    return new Snapshot(found.row, this.#deps, found.subscribers)
  }

  stop(): void {
    this.#unsubscribe()
  }
}

/** Whether the delivery hides the status from a client it has not been hidden from yet. */
function hidesSomeone(clients: Set<Client>, delivery: Delivery): boolean {
  for (const client of clients)
    if (!client.hidden && visibleIn(delivery, client.viewer) === false) return true
  return false
}

/**
 * Sends the delivery's snapshot to one client if it is news to them, or ends the stream if
 * it is hidden. Synchronous and allocation-free: the frame is the one every client shares.
 */
function deliver(client: Client, delivery: Delivery): void {
  if (client.sink.closed) return
  const { snapshot } = delivery
  const visible = visibleIn(delivery, client.viewer)
  if (visible === undefined) return
  if (!visible) {
    // told once; a many-status stream stays open and hears of the status when it is back
    if (client.hidden) return
    client.hidden = true
    gone(client, client.viewer.kind === 'link' ? 'linkEnded' : 'notVisible', snapshot.version)
    return
  }
  if (client.hidden) {
    // visible again (made public, a role given back): its state, even at the same version
    client.hidden = false
    client.first = false
    client.lastSent = -1
  }
  const { viewer } = client
  const frame =
    viewer.kind === 'share' || viewer.kind === 'link'
      ? delivery.share
      : viewer.userId === snapshot.row.owner_id
        ? delivery.owner
        : delivery.others
  if (frame === undefined) return
  if (client.first) {
    client.first = false
    // a client that resumes at the current version is up to date; any other id gets the state
    if (client.resumeFrom === snapshot.version) {
      client.lastSent = snapshot.version
      return
    }
  } else if (snapshot.version <= client.lastSent) return
  client.lastSent = snapshot.version
  client.sink.send(snapshot.version, frame)
}

/** The status is gone for this client (deleted, or no longer visible): say why. */
function gone(client: Client, reason: GoneReason, version: number | null): void {
  if (client.sink.closed) return
  client.sink.gone(reason, version)
}

/**
 * Every live stream of this instance, grouped by status. Streams are attached by the
 * events routes after their access checks; a feed exists while its status has viewers here.
 */
export class StatusFeeds {
  readonly #feeds = new Map<string, Feed>()
  readonly #deps: FeedDeps
  /** Clients watching through a private share link, for the expiry check. */
  readonly #linkClients = new Set<Client>()
  #linkTimer: NodeJS.Timeout | undefined
  #closed = false

  constructor(deps: FeedDeps) {
    this.#deps = deps
  }

  /**
   * Ends the streams whose private share link has expired (docs/accounts.md#private-share-links):
   * every LINK_CHECK_INTERVAL_MS while any is open, against the clock, with no storage read
   * (a revocation needs none: it is announced as a change, and checked with the change).
   */
  endExpiredLinks(): void {
    const now = (this.#deps.clock ?? systemClock).now()
    for (const client of [...this.#linkClients])
      if (client.viewer.kind === 'link' && now >= client.viewer.expiresAt)
        gone(client, 'linkEnded', null)
  }

  #watchLink(client: Client): void {
    this.#linkClients.add(client)
    client.sink.onClose(() => {
      this.#linkClients.delete(client)
      if (this.#linkClients.size === 0) {
        clearInterval(this.#linkTimer)
        this.#linkTimer = undefined
      }
    })
    if (this.#linkTimer) return
    this.#linkTimer = setInterval(
      () => this.endExpiredLinks(),
      this.#deps.linkCheckIntervalMs ?? LINK_CHECK_INTERVAL_MS,
    )
    // note: never keeps the process alive on its own
    this.#linkTimer.unref()
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
    await this.attachSink(statusId, new StreamSink(stream), viewer, resumeFrom)
  }

  /**
   * Attaches one status's sink (of a single- or many-status stream) and sends it the current
   * state (unless it resumes at the current version). Returns the way to detach it before its
   * connection ends (a many-status stream whose status was deleted).
   */
  async attachSink(
    statusId: string,
    sink: FeedSink,
    viewer: Viewer,
    resumeFrom: number | null,
  ): Promise<() => void> {
    if (this.#closed) {
      sink.close()
      return () => {}
    }
    let feed = this.#feeds.get(statusId)
    if (!feed) {
      feed = new Feed(statusId, this.#deps)
      this.#feeds.set(statusId, feed)
    }
    const client: Client = {
      sink,
      viewer,
      lastSent: -1,
      resumeFrom,
      first: true,
      hidden: false,
    }
    feed.clients.add(client)
    if (viewer.kind === 'link') this.#watchLink(client)
    const attached = feed
    const detach = () => {
      attached.clients.delete(client)
      if (attached.clients.size === 0 && this.#feeds.get(statusId) === attached) {
        attached.stop()
        this.#feeds.delete(statusId)
      }
    }
    sink.onClose(detach)
    // note: attached before this read, so a change committed meanwhile is not missed; the
    // version check in deliver() keeps the order right whichever arrives first
    try {
      const snapshot = await attached.load()
      if (!snapshot) gone(client, 'deleted', 0)
      else deliver(client, await snapshot.prepare([client]))
    } catch (err) {
      this.#deps.log.error({ err, statusId }, 'could not start a live stream')
      sink.close()
    }
    return detach
  }

  /**
   * A status the outbox says changed (live-relay.ts), at its `version` now (null: it is
   * gone). Its feed re-reads it unless it delivered that version already (heard by NOTIFY);
   * after a change of `access` (who may see it) always, to check every stream again.
   */
  relayed(statusId: string, version: number | null, access = false): void {
    this.#feeds.get(statusId)?.changed({
      statusId,
      version: version ?? Number.MAX_SAFE_INTEGER,
      kind: access ? 'access' : 'status',
    })
  }

  /** The statuses that have streams on this instance now. */
  statusIds(): string[] {
    return [...this.#feeds.keys()]
  }

  /** A status's feed re-reads it, if it has one. */
  refresh(statusId: string): void {
    this.#feeds.get(statusId)?.refresh()
  }

  /** Every feed re-reads its status (after the bus lost changes, e.g. on a reconnect). */
  refreshAll(): void {
    for (const feed of this.#feeds.values()) feed.refresh()
  }

  /**
   * Ends every stream (at shutdown: open streams would otherwise hold the server open).
   * `reconnectMs` gives each stream the delay its client is told to reconnect after
   * (SseStream.close), so clients come back at once, elsewhere, and spread out.
   */
  closeAll(reconnectMs?: () => number): void {
    this.#closed = true
    clearInterval(this.#linkTimer)
    this.#linkTimer = undefined
    for (const feed of [...this.#feeds.values()])
      for (const client of [...feed.clients]) client.sink.close(reconnectMs?.())
  }

  /** Open streams on a status on this instance (for tests and metrics). */
  clientCount(statusId: string): number {
    return this.#feeds.get(statusId)?.clients.size ?? 0
  }
}
