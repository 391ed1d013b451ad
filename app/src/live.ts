import { signedOutElsewhere } from './api.ts'
import type { Status } from './types.ts'

// Live updates for every screen (docs/app.md#live-updates): one EventSource carries up to 100
// statuses (GET /v1/events?status=…, docs/api.md#one-stream-for-many-statuses), so a board of
// many tiles holds one connection, not one per tile (browsers allow six per host over
// HTTP/1.1). More than 100 statuses take more streams of 100.
//
// Screens subscribe by status id and get the Status on every write (the first event is its
// current state). Changes to the set of ids are gathered for a moment, then only the streams
// whose list changed are reopened. A dropped connection is resumed by the browser itself
// with Last-Event-ID (each status picks up where it was); a refused one (the server answered
// an error, so EventSource gives up) is asked again after 1 s, doubling to 30 s, and a status
// the server says we may no longer see is reported to its subscribers and left out.

/** At most this many statuses on one stream (the API's limit). */
export const STATUSES_PER_STREAM = 100

export type LiveEvent =
  | { kind: 'status'; status: Status }
  | { kind: 'unavailable'; reason: 'deleted' | 'notVisible' | string }

export type LiveListener = (event: LiveEvent) => void

const listeners = new Map<string, Set<LiveListener>>()
/** The last Status each id got: a new subscriber sees it at once. */
const latest = new Map<string, Status>()

interface Stream {
  ids: string[]
  source: EventSource | null
  retryMs: number
  timer: ReturnType<typeof setTimeout> | null
}
let streams: Stream[] = []
let scheduled = false

/** Follows a status; returns the function that stops. */
export function subscribe(statusId: string, listener: LiveListener): () => void {
  let set = listeners.get(statusId)
  if (!set) {
    set = new Set()
    listeners.set(statusId, set)
    schedule()
  }
  set.add(listener)
  const known = latest.get(statusId)
  if (known) queueMicrotask(() => listener({ kind: 'status', status: known }))
  return () => {
    const current = listeners.get(statusId)
    if (!current) return
    current.delete(listener)
    if (current.size === 0) {
      listeners.delete(statusId)
      latest.delete(statusId)
      schedule()
    }
  }
}

/** Tells the subscribers of a status about a Status read elsewhere (a write's answer). */
export function publish(status: Status): void {
  latest.set(status.id, status)
  for (const listener of listeners.get(status.id) ?? []) listener({ kind: 'status', status })
}

function schedule(): void {
  if (scheduled) return
  scheduled = true
  // a screen that replaces another unsubscribes and subscribes in the same turn: one change
  setTimeout(() => {
    scheduled = false
    rebalance()
  }, 0)
}

/** Keeps the streams whose ids are all still wanted; the rest are reopened with new lists. */
function rebalance(): void {
  const wanted = new Set(listeners.keys())
  const kept: Stream[] = []
  const covered = new Set<string>()
  for (const stream of streams) {
    const still = stream.ids.filter((id) => wanted.has(id))
    if (still.length === stream.ids.length && still.length > 0) {
      kept.push(stream)
      for (const id of still) covered.add(id)
    } else close(stream)
  }
  const rest = [...wanted].filter((id) => !covered.has(id))
  // a partly filled kept stream is left alone: reopening it would cost its resume point
  for (let i = 0; i < rest.length; i += STATUSES_PER_STREAM) {
    const stream: Stream = {
      ids: rest.slice(i, i + STATUSES_PER_STREAM),
      source: null,
      retryMs: 1000,
      timer: null,
    }
    kept.push(stream)
    open(stream)
  }
  streams = kept
}

function close(stream: Stream): void {
  stream.source?.close()
  stream.source = null
  if (stream.timer) clearTimeout(stream.timer)
  stream.timer = null
  stream.ids = []
}

const urlOf = (ids: string[]) =>
  `/v1/events?${ids.map((id) => `status=${encodeURIComponent(id)}`).join('&')}`

function open(stream: Stream): void {
  if (stream.ids.length === 0) return
  const source = new EventSource(urlOf(stream.ids), { withCredentials: true })
  stream.source = source
  source.addEventListener('open', () => {
    stream.retryMs = 1000
  })
  source.addEventListener('status', (event) => {
    const { statusId, status } = JSON.parse((event as MessageEvent<string>).data) as {
      statusId: string
      status: Status
    }
    latest.set(statusId, status)
    for (const listener of listeners.get(statusId) ?? []) listener({ kind: 'status', status })
  })
  source.addEventListener('unavailable', (event) => {
    const data = JSON.parse((event as MessageEvent<string>).data) as {
      statusId?: string
      reason: string
    }
    // without a statusId the whole stream ended (the session stopped working)
    const ids = data.statusId ? [data.statusId] : stream.ids
    for (const id of ids) {
      latest.delete(id)
      for (const listener of listeners.get(id) ?? [])
        listener({ kind: 'unavailable', reason: data.reason })
    }
    if (data.reason === 'deleted' && data.statusId) drop(stream, [data.statusId])
  })
  source.addEventListener('error', () => {
    // CONNECTING: the browser resumes by itself (with Last-Event-ID); CLOSED: it gave up
    if (source.readyState !== EventSource.CLOSED || stream.source !== source) return
    stream.source = null
    stream.timer = setTimeout(() => {
      stream.timer = null
      void recover(stream)
    }, stream.retryMs)
    stream.retryMs = Math.min(stream.retryMs * 2, 30_000)
  })
}

/** Leaves ids out of a stream (they are gone): it reopens with the others. */
function drop(stream: Stream, gone: string[]): void {
  const rest = stream.ids.filter((id) => !gone.includes(id))
  stream.source?.close()
  stream.source = null
  stream.ids = rest
  if (rest.length > 0) open(stream)
}

/**
 * A refused stream: asks once with fetch, which can read why (EventSource cannot). A 404
 * names each status we may not see any more; those are reported and left out.
 */
async function recover(stream: Stream): Promise<void> {
  if (stream.ids.length === 0) return
  const controller = new AbortController()
  let gone: string[] = []
  let signedOut = false
  try {
    const response = await fetch(urlOf(stream.ids), {
      headers: { accept: 'text/event-stream' },
      credentials: 'same-origin',
      signal: controller.signal,
    })
    if (response.status === 404) {
      const body = (await response.json()) as { errors?: { field: string }[] }
      gone = (body.errors ?? [])
        .map((e) => stream.ids[Number(e.field.replace(/^status\./, ''))])
        .filter((id): id is string => id !== undefined)
    }
    signedOut = response.status === 401
  } catch {
    // offline: try again later, as for any other failure
  } finally {
    controller.abort()
  }
  // the session ended (signed out elsewhere, the account disabled): the app shows sign-in
  if (signedOut) return signedOutElsewhere()
  for (const id of gone) {
    latest.delete(id)
    for (const listener of listeners.get(id) ?? [])
      listener({ kind: 'unavailable', reason: 'notVisible' })
  }
  if (gone.length > 0) drop(stream, gone)
  else open(stream)
}
