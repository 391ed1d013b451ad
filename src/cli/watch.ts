import type { ClientSettings } from './client-config.ts'
import {
  backoff,
  ClientError,
  call,
  networkReason,
  refusal,
  retryable,
  type Sleep,
} from './client-http.ts'
import type { Output } from './output.ts'

/** One Server-Sent Event (the fields statusd sends). */
export interface ServerEvent {
  event: string
  data: string
  id?: string
}

/**
 * The events of a `text/event-stream` body, as the HTML standard parses them: fields up to a
 * blank line, comments (`: ping`) skipped, `data:` lines joined. statusd ends lines with LF; a
 * CR before it is dropped.
 */
export async function* serverEvents(
  body: AsyncIterable<Uint8Array>,
  onRetry: (ms: number) => void = () => {},
): AsyncGenerator<ServerEvent> {
  const decoder = new TextDecoder()
  let buffer = ''
  let event = ''
  let data: string[] = []
  let id: string | undefined
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true })
    for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end).replace(/\r$/, '')
      buffer = buffer.slice(end + 1)
      if (line === '') {
        if (data.length > 0)
          yield {
            event: event || 'message',
            data: data.join('\n'),
            ...(id !== undefined && { id }),
          }
        event = ''
        data = []
        continue
      }
      if (line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'event') event = value
      else if (field === 'data') data.push(value)
      else if (field === 'id' && !value.includes('\0')) id = value
      else if (field === 'retry' && /^\d+$/.test(value)) onRetry(Number(value))
    }
  }
}

export interface WatchOptions {
  output: Output
  sleep: Sleep
  signal: AbortSignal
  err: (text: string) => void
}

interface Source {
  url: string
  apiKey?: string
}

/** The longest pause between two reconnects. */
const MOST_WAIT_MS = 30_000

/**
 * Which stream `target` names: your status by key, then by id (with a key), then a public
 * status by share id (with or without one).
 */
async function sourceOf(
  settings: ClientSettings,
  target: string,
  { sleep, signal }: WatchOptions,
): Promise<Source> {
  const seg = encodeURIComponent(target)
  const missing = (e: unknown) => e instanceof ClientError && (e.status === 404 || e.status === 400)
  if (settings.apiKey) {
    for (const path of [`/v1/status-keys/${seg}`, `/v1/status/${seg}`]) {
      try {
        const found = await call<{ id: string }>(settings, { method: 'GET', path }, sleep, signal)
        return {
          url: `${settings.url}/v1/status/${encodeURIComponent(found.body.id)}/events`,
          apiKey: settings.apiKey,
        }
      } catch (e) {
        if (!missing(e)) throw e
      }
    }
  }
  try {
    await call(settings, { method: 'GET', path: `/v1/share/${seg}`, apiKey: '' }, sleep, signal)
    return { url: `${settings.url}/v1/share/${seg}/events` }
  } catch (e) {
    if (!missing(e)) throw e
    throw new ClientError(
      `no status with the key, id or share id "${target}"${settings.apiKey ? '' : ' (without a key, only public statuses by share id)'}`,
      'notFound',
      undefined,
      404,
    )
  }
}

/**
 * `statusd watch`: prints the status, then every change, until `signal` aborts. A dropped
 * connection is opened again with `Last-Event-ID`, so the server sends only what changed
 * meanwhile (docs/sharing.md#live-updates-server-sent-events); the pause before it doubles
 * with every failure in a row, from the server's `retry:` up to 30 s.
 */
export async function watch(
  settings: ClientSettings,
  target: string,
  options: WatchOptions,
): Promise<void> {
  const { output, sleep, signal, err } = options
  let source: Source
  try {
    source = await sourceOf(settings, target, options)
  } catch (e) {
    if (signal.aborted) return
    throw e
  }
  let lastEventId: string | undefined
  let retryMs = 1000
  let failures = 0
  const pause = async (why: string, retryAfter?: string | null) => {
    failures++
    const ms =
      failures === 1 && !retryAfter
        ? retryMs
        : Math.min(Math.max(retryMs, backoff(failures - 1, retryAfter)), MOST_WAIT_MS)
    if (!output.json) err(`statusd: ${why}; reconnecting in ${Math.ceil(ms / 1000)} s\n`)
    await sleep(ms, signal)
  }
  while (!signal.aborted) {
    let res: Response
    try {
      res = await fetch(source.url, {
        headers: {
          accept: 'text/event-stream',
          ...(source.apiKey && { authorization: `Bearer ${source.apiKey}` }),
          ...(lastEventId !== undefined && { 'last-event-id': lastEventId }),
        },
        signal,
      })
    } catch (e) {
      if (signal.aborted) return
      await pause(`cannot reach ${settings.url}: ${networkReason(e)}`)
      continue
    }
    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => '')
      if (retryable(res.status)) {
        await pause(`the server answered ${res.status}`, res.headers.get('retry-after'))
        continue
      }
      throw refusal(res, text)
    }
    try {
      for await (const event of serverEvents(res.body, (ms) => {
        retryMs = ms
      })) {
        if (event.id !== undefined) lastEventId = event.id
        if (event.event === 'status') {
          failures = 0
          show(output, JSON.parse(event.data))
        } else if (event.event === 'unavailable') {
          const { reason } = JSON.parse(event.data) as { reason: string }
          throw new ClientError(UNAVAILABLE[reason] ?? `the stream ended: ${reason}`, reason)
        }
      }
    } catch (e) {
      if (signal.aborted) return
      if (e instanceof ClientError) throw e
      await pause(`the connection dropped (${networkReason(e)})`)
      continue
    }
    if (signal.aborted) return
    await pause('the server ended the stream')
  }
}

const UNAVAILABLE: Record<string, string> = {
  deleted: 'the status was deleted',
  notVisible: 'the status is no longer visible to you',
  unauthorized: 'the API key stopped working (revoked, expired or rotated away)',
  notVerified: 'your account is no longer verified',
}

/** One event: its JSON on one line with --json, else when, which and what. */
function show(
  output: Output,
  s: {
    statusKey?: string | null
    name: string
    value: string | null
    valueUpdatedAt: string | null
    updatedAt: string
  },
): void {
  output.out(
    output.json
      ? `${JSON.stringify(s)}\n`
      : `${s.valueUpdatedAt ?? s.updatedAt}  ${s.statusKey ?? s.name}  ${s.value ?? '(none)'}\n`,
  )
}

/** The most statuses one stream of many carries (docs/api.md#one-stream-for-many-statuses). */
const STATUSES_PER_STREAM = 100

/**
 * The current state of each status named, by id, read from the stream of many statuses
 * (`GET /v1/events?status=…`), which sends the current state of each first: one request per
 * 100 statuses instead of one per status. The stream is closed as soon as every state came.
 * A status deleted since its id was listed is left out.
 */
export async function currentStatuses<T extends { id: string }>(
  settings: ClientSettings,
  ids: readonly string[],
): Promise<Map<string, T>> {
  const found = new Map<string, T>()
  for (let start = 0; start < ids.length; start += STATUSES_PER_STREAM) {
    let batch = ids.slice(start, start + STATUSES_PER_STREAM)
    while (batch.length > 0) {
      const gone = await readStates(settings, batch, found)
      if (gone.length === 0) break
      // refused for ids that are gone (deleted meanwhile): ask again without them
      batch = batch.filter((id) => !gone.includes(id))
    }
  }
  return found
}

/** One stream's first states into `found`; the ids the server refused it for, if it did. */
async function readStates<T>(
  settings: ClientSettings,
  ids: readonly string[],
  found: Map<string, T>,
): Promise<string[]> {
  const query = ids.map((id) => `status=${encodeURIComponent(id)}`).join('&')
  const done = new AbortController()
  let res: Response
  try {
    res = await fetch(`${settings.url}/v1/events?${query}`, {
      headers: {
        accept: 'text/event-stream',
        ...(settings.apiKey && { authorization: `Bearer ${settings.apiKey}` }),
      },
      signal: done.signal,
    })
  } catch (e) {
    throw new ClientError(`cannot reach ${settings.url}: ${networkReason(e)}`)
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '')
    if (res.status === 404) {
      // each id that may not be streamed is named by its position (`status.3`)
      const body = JSON.parse(text || '{}') as { errors?: { field?: string }[] }
      const gone = (body.errors ?? [])
        .map((e) => /^status\.(\d+)$/.exec(e.field ?? '')?.[1])
        .map((i) => (i === undefined ? undefined : ids[Number(i)]))
        .filter((id): id is string => id !== undefined)
      if (gone.length > 0) return gone
    }
    throw refusal(res, text)
  }
  const waiting = new Set(ids)
  try {
    for await (const event of serverEvents(res.body)) {
      const { statusId, status } = JSON.parse(event.data) as { statusId: string; status?: T }
      if (event.event === 'status' && status !== undefined) found.set(statusId, status)
      waiting.delete(statusId)
      if (waiting.size === 0) break
    }
  } finally {
    done.abort()
  }
  return []
}
