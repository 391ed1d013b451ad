import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { StreamQuota } from '../../lib/client-limits.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { serverBusy, tooManyStreams } from '../../lib/errors.ts'
import { ResponseSink, SSE_HEADERS, type SseOptions, SseStream } from '../../lib/sse.ts'

// Opening an event stream, shared by every stream route (a status's, a share's, a link's,
// many statuses', a board's): the per-client place, the response taken over, the OpenAPI
// description of the answer.

/** What a client refused a stream is told to wait: streams end when their clients leave. */
const STREAM_RETRY_AFTER_SECONDS = 10

/**
 * Takes one of a client's stream places (docs/operations.md#limits-per-client)
 * before any await, so concurrent opens cannot overshoot: a user's for a keyed stream, whatever
 * key it uses, and the address's for an anonymous one (`request.ip`: the peer, or with
 * TRUST_PROXY the client X-Forwarded-For names; an IPv6 address counts by its /64, as the
 * rate limits do, since one host holds a whole /64). Over the cap: 429 tooManyStreams.
 * Every stream route takes its place here, so this is also where the server-wide capacity
 * holds (docs/operations.md#server-wide-stream-capacity): beyond it, 503 serverBusy.
 */
export function takePlace(quota: StreamQuota, client: string): () => void {
  const release = quota.acquire(client)
  if (release === 'client') throw tooManyStreams(quota.max, STREAM_RETRY_AFTER_SECONDS)
  if (release === 'server') throw serverBusy(STREAM_RETRY_AFTER_SECONDS)
  return release
}

interface Opened {
  stream: SseStream | null
}

/**
 * Opens a stream in a place taken for it: the place is given back if opening fails or opens
 * nothing, and otherwise when the stream ends, however it ends (the client leaves, its key
 * or access goes, the status goes, shutdown).
 */
export async function openInPlace<T extends Opened>(
  release: () => void,
  open: () => Promise<T>,
): Promise<T> {
  let opened: T
  try {
    opened = await open()
  } catch (err) {
    release()
    throw err
  }
  if (opened.stream === null) release()
  else opened.stream.onClose(release)
  return opened
}

export const EVENT_STREAM_RESPONSE = {
  200: {
    description:
      'An event stream: `event: status` (`id:` the version, `data:` the JSON), `event: unavailable` before the server ends a stream whose status was deleted or hidden, and `: ping` comments as heartbeats.',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  },
  ...ERROR_RESPONSES,
}

/**
 * Takes the response over from Fastify and opens an event stream on it. A HEAD gets the
 * stream's head and nothing more (null): a stream left open would hold its connection, and
 * every request queued behind it, for good. null too when the client has left already.
 */
export function openStream(
  request: FastifyRequest,
  reply: FastifyReply,
  sse: SseOptions,
  extraHeaders: Record<string, string> = {},
): SseStream | null {
  reply.hijack()
  const raw = reply.raw
  // the client left while access was checked: there is no one to stream to
  if (raw.destroyed || request.raw.destroyed) return null
  // note: a hijacked reply runs no onSend hook: the headers hooks set before the handler
  // (rate limits) are taken from the reply, the rest are given here
  raw.writeHead(200, {
    ...(reply.getHeaders() as OutgoingHttpHeaders),
    ...SSE_HEADERS,
    'x-request-id': request.id,
    ...extraHeaders,
  })
  if (request.method === 'HEAD') {
    raw.end()
    return null
  }
  // events are small and should leave at once; keep-alive probes find vanished peers
  request.raw.socket.setNoDelay(true)
  request.raw.socket.setKeepAlive(true, 30_000)
  const stream = new SseStream(new ResponseSink(raw), sse)
  stream.start()
  return stream
}
