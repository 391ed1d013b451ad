import { normalizeIP } from '@fastify/rate-limit'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import type { DB } from '../../db/database.ts'
import type { StreamQuota } from '../../lib/client-limits.ts'
import { ApiError, type FieldError } from '../../lib/errors.ts'
import { API_RESPONSE_HEADERS, PRIVATE_LINK_VIEW_HEADERS } from '../../lib/response-headers.ts'
import { parseLastEventId, type SseOptions } from '../../lib/sse.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { publicStatus } from '../statuses/share.service.ts'
import { linkedStatus, ShareLinkTokenParamsSchema } from '../statuses/share-links.service.ts'
import { ShareIdParamsSchema } from '../statuses/sharing.schemas.ts'
import { accessById } from '../statuses/sharing.service.ts'
import { StatusIdParamsSchema } from '../statuses/statuses.schemas.ts'
import { EVENT_STREAM_RESPONSE, openInPlace, openStream, takePlace } from './event-streams.ts'
import { attachMany, MAX_STREAM_STATUSES, manyStreamOptions } from './many-statuses.ts'
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

/** `?status=<id>&status=<id>…`: one to MAX_STREAM_STATUSES different status ids. */
const ManyStatusesQuerySchema = Type.Object({
  status: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1,
    maxItems: MAX_STREAM_STATUSES,
    uniqueItems: true,
    description: 'A status id; repeat the parameter for each status',
  }),
})

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
          'Starts with the current state unless `Last-Event-ID` names the current version; then one `status` event per write (value, setting). Event ids are the status version: they grow with every write. The stream ends with `event: unavailable` when the status is deleted or hidden from you (`deleted`, `notVisible`), or when the API key it was opened with stops working (`unauthorized`: revoked, expired or rotated away; within `AUTH_CACHE_SECONDS`, at once when revoked through this instance) or your user is no longer verified (`notVerified`). A user holds at most `STREAMS_PER_CLIENT` (64) open streams, whatever keys they use; one more is 429 `tooManyStreams`. A stream beyond the server-wide stream capacity is 503 `serverBusy`.',
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

  app.get(
    '/v1/events',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'streamManyStatusEvents',
        summary: 'Live updates of many statuses on one stream (Server-Sent Events)',
        description: `One stream for 1 to ${MAX_STREAM_STATUSES} statuses you may see: \`?status=<id>&status=<id>…\`. Every event names its status: \`event: status\` with \`{"statusId", "status"}\` (the Status as \`/v1/status/:statusId/events\` sends it), \`event: unavailable\` with \`{"statusId", "reason"}\` when one is deleted or hidden from you; the stream goes on with the others, and a hidden status that is visible again comes back as a \`status\` event. Event ids are a cursor of every status's version: \`Last-Event-ID\` resumes each. Any status you may not see (or named twice) refuses the stream: 404 notFound naming each in \`errors\`. Counts once against \`STREAMS_PER_CLIENT\`.`,
        tags: ['live updates'],
        querystring: ManyStatusesQuerySchema,
        response: EVENT_STREAM_RESPONSE,
      },
      // one `status=` parameter arrives as a string: a list of one, as the schema reads it
      preValidation: (request, _reply, done) => {
        const query = request.query as Record<string, unknown>
        if (typeof query.status === 'string') query.status = [query.status]
        done()
      },
    },
    async (request, reply) => {
      const { caller } = request
      const statusIds = request.query.status
      const release = takePlace(quota, `user ${caller.userId}`)
      const { stream } = await openInPlace(release, async () => {
        // every status is checked before the stream opens: one the caller may not see
        // refuses it (404, each named), rather than a stream silently missing it
        const missing: FieldError[] = []
        for (const [i, statusId] of statusIds.entries()) {
          try {
            await accessById(db, caller, statusId)
          } catch (err) {
            if (!(err instanceof ApiError) || err.statusCode !== 404) throw err
            missing.push({
              field: `status.${i}`,
              message: `${statusId} is not a status you may see`,
            })
          }
        }
        if (missing.length > 0) throw new ApiError(404, 'notFound', 'Status not found', missing)
        const stream = openStream(request, reply, manyStreamOptions(sse, statusIds.length), {
          ...API_RESPONSE_HEADERS,
          'cache-control': `${API_RESPONSE_HEADERS['cache-control']}, no-transform`,
        })
        return { stream }
      })
      if (stream === null) return reply
      streamCredentials?.track(caller.credential, stream)
      await attachMany(
        feeds,
        stream,
        statusIds,
        { kind: 'user', userId: caller.userId },
        request.headers['last-event-id'],
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
          'As `/v1/status/:statusId/events`, with the public share view as data. The stream ends (after `event: unavailable`) when the status is deleted or made private. One client address holds at most `STREAMS_PER_CLIENT` (64) open streams; one more is 429 `tooManyStreams`. A stream beyond the server-wide stream capacity is 503 `serverBusy`.',
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
      config: { auth: 'none', anonymousLimit: true, anyOrigin: true },
      // a refusal carries the link's headers too (never cached, no referrer, any origin)
      onSend: (_request, reply, _payload, done) => {
        reply.headers(PRIVATE_LINK_VIEW_HEADERS)
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
          ...PRIVATE_LINK_VIEW_HEADERS,
          'cache-control': `${PRIVATE_LINK_VIEW_HEADERS['cache-control']}, no-transform`,
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
