import { createHash } from 'node:crypto'
import { SseFrame, type SseOptions, type SseStream } from '../../lib/sse.ts'
import type { FeedSink, GoneReason, Rendered, StatusFeeds, Viewer } from './status-feeds.ts'

// One stream for many statuses (docs/api.md#one-stream-for-many-statuses): `GET /v1/events`
// and a board's stream. Each status is attached to its feed as on its own stream, through a
// sink of its own; the sinks share one connection, one heartbeat and one stream place, and
// every event names its status:
//
//   event: status       data: {"statusId": "…", "status": <the Status, or the share view>}
//   event: unavailable  data: {"statusId": "…", "reason": "deleted" | "notVisible"}
//
// A status hidden from the viewer does not end the stream: it is announced `unavailable`, and
// comes back as a `status` event when it is visible again. Event ids are a cursor of every
// status's version (below), so `Last-Event-ID` resumes each status where it was.

/** Statuses one stream may carry (a board's most, too). */
export const MAX_STREAM_STATUSES = 100

/**
 * The cursor (`id:` of every event): `<list>.<v1>.<v2>…`, where `<list>` tells the list of
 * statuses apart (8 characters of a hash of their ids, in order) and `<vN>` is the version of
 * the Nth status the client has (base 36; empty when it has none, or was told the status is
 * unavailable). A reconnect with the same list resumes every status; another list (a board
 * changed), or anything else, starts every status afresh.
 */
export const listTag = (statusIds: readonly string[]): string =>
  createHash('sha256').update(statusIds.join(',')).digest('base64url').slice(0, 8)

/** The cursor of these versions (-1: none) for this list of statuses. */
export function encodeCursor(tag: string, versions: readonly number[]): string {
  return [tag, ...versions.map((v) => (v < 0 ? '' : v.toString(36)))].join('.')
}

/** The version to resume each status from (null: none), from a Last-Event-ID. */
export function parseCursor(
  header: string | string[] | undefined,
  statusIds: readonly string[],
): (number | null)[] {
  const none = statusIds.map(() => null)
  const text = Array.isArray(header) ? header[0] : header
  if (text === undefined) return none
  const parts = text.trim().split('.')
  if (parts.length !== statusIds.length + 1 || parts[0] !== listTag(statusIds)) return none
  const versions = parts.slice(1).map((part) => {
    if (part === '') return null
    if (!/^[0-9a-z]{1,10}$/.test(part)) return undefined
    return Number.parseInt(part, 36)
  })
  return versions.includes(undefined) ? none : (versions as (number | null)[])
}

/** Room in the client's buffer for one status's first event (a Status with a long description and a full palette, and the cursor). */
const FIRST_EVENT_BYTES = 4096

/**
 * The SSE tuning of a stream of `count` statuses: its buffer bound (SseOptions.maxBufferedBytes,
 * what a client may leave unread before it is dropped) grows by room for every status's first
 * event, which all leave at once when it opens: 100 statuses' current states are more than a
 * single status's bound, and a client on a slow link or a busy machine was dropped and
 * reconnected before it had read them.
 */
export const manyStreamOptions = (sse: SseOptions, count: number): SseOptions => ({
  ...sse,
  maxBufferedBytes: sse.maxBufferedBytes + count * FIRST_EVENT_BYTES,
})

/** A frame of this stream: one data line (JSON has no line breaks), the cursor as its id. */
const frameOf = (event: string, cursor: string, data: string): SseFrame =>
  new SseFrame(`event: ${event}\nid: ${cursor}\ndata: ${data}\n\n`)

/** Many statuses on one connection: the cursor they share, and a sink per status. */
class ManyStatusStream {
  readonly #stream: SseStream
  readonly #tag: string
  readonly #versions: number[]

  constructor(stream: SseStream, statusIds: readonly string[], resume: readonly (number | null)[]) {
    this.#stream = stream
    this.#tag = listTag(statusIds)
    // what the client has: resumed statuses keep their place in the cursor until they change
    this.#versions = resume.map((v) => v ?? -1)
  }

  sink(index: number, statusId: string): FeedSink {
    const stream = this.#stream
    const id = JSON.stringify(statusId)
    let deleted = false
    const emit = (event: string, version: number, data: string) => {
      this.#versions[index] = version
      stream.send(frameOf(event, encodeCursor(this.#tag, this.#versions), data))
    }
    return {
      get closed() {
        return stream.closed
      },
      send: (version: number, body: Rendered) => {
        if (deleted) return
        emit('status', version, `{"statusId":${id},"status":${body.json}}`)
      },
      gone: (reason: GoneReason, _version: number | null) => {
        if (deleted) return
        // once deleted, a status never comes back (ids are never reused): nothing more of it
        if (reason === 'deleted') deleted = true
        // the client has no state of it now: a resume sends it afresh once it is back
        emit('unavailable', -1, JSON.stringify({ statusId, reason }))
      },
      close: (reconnectMs?: number) => stream.close(reconnectMs),
      onClose: (listener: () => void) => stream.onClose(listener),
    }
  }
}

/**
 * Attaches every status of a many-status stream (in order: the client gets their current
 * states in the order asked for), each resuming from the Last-Event-ID's cursor.
 */
export async function attachMany(
  feeds: StatusFeeds,
  stream: SseStream,
  statusIds: readonly string[],
  viewer: Viewer,
  lastEventId: string | string[] | undefined,
): Promise<void> {
  const resume = parseCursor(lastEventId, statusIds)
  const many = new ManyStatusStream(stream, statusIds, resume)
  for (const [index, statusId] of statusIds.entries()) {
    if (stream.closed) return
    await feeds.attachSink(statusId, many.sink(index, statusId), viewer, resume[index] ?? null)
  }
}
