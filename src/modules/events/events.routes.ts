import type { OutgoingHttpHeaders } from 'node:http'
import { normalizeIP } from '@fastify/rate-limit'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import type { StreamQuota } from '../../lib/client-limits.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { tooManyStreams } from '../../lib/errors.ts'
import { API_RESPONSE_HEADERS, PRIVATE_LINK_HEADERS } from '../../lib/response-headers.ts'
import {
  parseLastEventId,
  ResponseSink,
  SSE_HEADERS,
  type SseOptions,
  SseStream,
} from '../../lib/sse.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { publicStatus } from '../statuses/share.service.ts'
import { linkedStatus, ShareLinkTokenParamsSchema } from '../statuses/share-links.service.ts'
import { ShareIdParamsSchema } from '../statuses/sharing.schemas.ts'
import { accessById } from '../statuses/sharing.service.ts'
import { StatusIdParamsSchema } from '../statuses/statuses.schemas.ts'
import type { StatusFeeds, Viewer } from './status-feeds.ts'
import type { StreamCredentials } from './stream-credentials.ts'

export interface EventsRouteOptions {
  db: Kysely<DB>
  feeds: StatusFeeds
  sse: SseOptions
  /** Open streams per client (STREAMS_PER_CLIENT), shared by both routes. */
  quota: StreamQuota
  /** Where an authenticated stream is watched until its key stops working. */
  streamCredentials?: StreamCredentials
  /** What the private share link stream reads links with (its clock judges expiry). */
  deps?: ServiceDeps
}

/** What a client refused a stream is told to wait: streams end when their clients leave. */
const STREAM_RETRY_AFTER_SECONDS = 10

/**
 * Takes one of a client's stream places (docs/operations.md#limits-per-client)
 * before any await, so concurrent opens cannot overshoot: a user's for a keyed stream, whatever
 * key it uses, and the address's for an anonymous one (`request.ip`: the peer, or with
 * TRUST_PROXY the client X-Forwarded-For names; an IPv6 address counts by its /64, as the
 * rate limits do, since one host holds a whole /64). Over the cap: 429 tooManyStreams.
 */
function takePlace(quota: StreamQuota, client: string): () => void {
  const release = quota.acquire(client)
  if (release === null) throw tooManyStreams(quota.max, STREAM_RETRY_AFTER_SECONDS)
  return release
}

interface Opened {
  statusId: string
  stream: SseStream | null
}

/**
 * Opens a stream in a place taken for it: the place is given back if opening fails or opens
 * nothing, and otherwise when the stream ends, however it ends (the client leaves, its key
 * or access goes, the status goes, shutdown).
 */
async function openInPlace(release: () => void, open: () => Promise<Opened>): Promise<Opened> {
  let opened: Opened
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

const EVENT_STREAM_RESPONSE = {
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
function openStream(
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

/**
 * `GET /v1/status/:statusId/events` — authenticated; whoever may GET the status
 * (docs/sharing.md#live-updates-server-sent-events).
 */
export const statusEventsRoutes: FastifyPluginAsyncTypebox<EventsRouteOptions> = async (
  app,
  { db, feeds, sse, quota, streamCredentials },
) => {
  app.get(
    '/v1/status/:statusId/events',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'streamStatusEvents',
        summary: 'Live updates of a status you may see (Server-Sent Events)',
        description:
          'Starts with the current state unless `Last-Event-ID` names the current version; then one `status` event per write (value, setting). Event ids are the status version: they grow with every write. The stream ends with `event: unavailable` when the status is deleted or hidden from you (`deleted`, `notVisible`), or when the API key it was opened with stops working (`unauthorized`: revoked, expired or rotated away; within `AUTH_CACHE_SECONDS`, at once when revoked through this instance) or your user is no longer verified (`notVerified`). A user holds at most `STREAMS_PER_CLIENT` (64) open streams, whatever keys they use; one more is 429 `tooManyStreams`.',
        tags: ['live updates'],
        params: StatusIdParamsSchema,
        response: EVENT_STREAM_RESPONSE,
      },
    },
    async (request, reply) => {
      const { caller } = request
      const release = takePlace(quota, `user ${caller.userId}`)
      const { statusId, stream } = await openInPlace(release, async () => {
        // access errors are ordinary JSON errors: the stream opens only after this check
        const { status } = await accessById(db, caller, request.params.statusId)
        const stream = openStream(request, reply, sse, {
          ...API_RESPONSE_HEADERS,
          'cache-control': `${API_RESPONSE_HEADERS['cache-control']}, no-transform`,
        })
        return { statusId: status.id, stream }
      })
      if (stream === null) return reply
      const viewer: Viewer = { kind: 'user', userId: caller.userId }
      // the stream lasts only as long as its key works (and its user stays verified)
      streamCredentials?.track(caller.credential, stream)
      await feeds.attach(
        statusId,
        stream,
        viewer,
        parseLastEventId(request.headers['last-event-id']),
      )
      return reply
    },
  )
}

/**
 * `GET /v1/share/:shareId/events` — anonymous; public statuses only
 * (docs/sharing.md#live-updates-server-sent-events).
 */
export const shareEventsRoutes: FastifyPluginAsyncTypebox<EventsRouteOptions> = async (
  app,
  { db, feeds, sse, quota },
) => {
  app.get(
    '/v1/share/:shareId/events',
    {
      // a refusal (404, 400) carries the public view's headers too; the stream sets its own
      config: { auth: 'none', publicView: true, anonymousLimit: true },
      schema: {
        operationId: 'streamSharedStatusEvents',
        summary: 'Live updates of a public status (Server-Sent Events, no API key)',
        description:
          'As `/v1/status/:statusId/events`, with the public share view as data. The stream ends (after `event: unavailable`) when the status is deleted or made private. One client address holds at most `STREAMS_PER_CLIENT` (64) open streams; one more is 429 `tooManyStreams`.',
        tags: ['public'],
        params: ShareIdParamsSchema,
        response: EVENT_STREAM_RESPONSE,
      },
    },
    async (request, reply) => {
      const release = takePlace(quota, `ip ${normalizeIP(request.ip)}`)
      const { statusId, stream } = await openInPlace(release, async () => {
        const status = await publicStatus(db, request.params.shareId)
        const stream = openStream(request, reply, sse, {
          'access-control-allow-origin': '*',
          'x-content-type-options': 'nosniff',
        })
        return { statusId: status.id, stream }
      })
      if (stream === null) return reply
      await feeds.attach(
        statusId,
        stream,
        { kind: 'share' },
        parseLastEventId(request.headers['last-event-id']),
      )
      return reply
    },
  )
}

/**
 * `GET /v1/share-links/:token/events` — whoever holds a private share link, no key
 * (docs/accounts.md#private-share-links). As the share stream, whatever the status's
 * accessType; the stream ends (after `event: unavailable` `{"reason":"linkEnded"}`) when the
 * link is revoked, on any instance, or expires.
 */
export const shareLinkEventsRoutes: FastifyPluginAsyncTypebox<EventsRouteOptions> = async (
  app,
  { db, feeds, sse, quota, deps },
) => {
  const services: ServiceDeps = deps ?? { db, plans: {} }
  app.get(
    '/v1/share-links/:token/events',
    {
      config: { auth: 'none', anonymousLimit: true },
      // a refusal carries the link's headers too (never cached, no referrer)
      onSend: (_request, reply, _payload, done) => {
        reply.headers(PRIVATE_LINK_HEADERS)
        done()
      },
      schema: {
        operationId: 'streamLinkedStatusEvents',
        summary:
          'Live updates of the status a private share link shows (Server-Sent Events, no API key)',
        description:
          'As `/v1/share/:shareId/events`, whatever the status\'s accessType. The stream ends with `event: unavailable`: `{"reason":"linkEnded"}` when the link is revoked (at once, on every instance) or expires (within a second), `deleted` when the status is. Forged, revoked or expired: 404. One client address holds at most `STREAMS_PER_CLIENT` (64) open streams.',
        tags: ['share links'],
        params: ShareLinkTokenParamsSchema,
        response: EVENT_STREAM_RESPONSE,
      },
    },
    async (request, reply) => {
      const release = takePlace(quota, `ip ${normalizeIP(request.ip)}`)
      let viewer: Viewer | undefined
      const { statusId, stream } = await openInPlace(release, async () => {
        const linked = await linkedStatus(services, request.params.token)
        viewer = { kind: 'link', linkId: linked.linkId, expiresAt: linked.expiresAt }
        const stream = openStream(request, reply, sse, {
          ...PRIVATE_LINK_HEADERS,
          'cache-control': `${PRIVATE_LINK_HEADERS['cache-control']}, no-transform`,
        })
        return { statusId: linked.status.id, stream }
      })
      if (stream === null || viewer === undefined) return reply
      await feeds.attach(
        statusId,
        stream,
        viewer,
        parseLastEventId(request.headers['last-event-id']),
      )
      return reply
    },
  )
}
