import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { emptyBody } from '../../lib/errors.ts'
import { etagMatches } from '../../lib/etag.ts'
import {
  parseIdempotencyKey,
  requestFingerprint,
  runIdempotent,
  type StoredResponse,
} from '../idempotency/idempotency.service.ts'
import type { ServiceDeps } from '../service-deps.ts'
import {
  ListQuerySchema,
  StatusIdParamsSchema,
  StatusInputSchema,
  StatusKeyParamsSchema,
  StatusListEntrySchema,
  StatusSchema,
} from './statuses.schemas.ts'
import {
  deleteStatusById,
  deleteStatusByKey,
  getStatusById,
  getStatusByKey,
  listOwned,
  setStatusByKey,
  type TaggedStatus,
  updateStatusById,
  type WriteResult,
} from './statuses.service.ts'

const tags = ['statuses']
const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }]

/** Operations 1–6 of SPEC §2. Routes translate HTTP to a service call and back, nothing more. */
export const statusRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  publicUrl: string | null
}> = async (app, { deps, publicUrl }) => {
  const caller = (user: { id: string; plan: string }) => ({ userId: user.id, plan: user.plan })

  // no body at all is the same mistake as `{}`: nothing to update
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && request.routeOptions.schema?.body) throw emptyBody()
    done()
  })

  /** Sends a single-status response with its ETag (and Location / replay marker). */
  const sendStatus = (
    reply: FastifyReply,
    response: StoredResponse & { replayed?: boolean },
  ): FastifyReply => {
    reply.code(response.statusCode)
    if (response.etag !== null) reply.header('etag', response.etag)
    if (response.location) reply.header('location', response.location)
    if (response.replayed) reply.header('idempotent-replayed', 'true')
    return reply.send(response.body)
  }

  /** A GET of one status: 304 when the client's If-None-Match still matches. */
  const NOT_MODIFIED = Type.Null({
    description: 'Not modified: `If-None-Match` names the current ETag (no body)',
  })

  const sendRead = (request: FastifyRequest, reply: FastifyReply, read: TaggedStatus) => {
    const ifNoneMatch = request.headers['if-none-match']
    if (ifNoneMatch !== undefined && etagMatches(ifNoneMatch, read.etag, true))
      return reply.code(304).header('etag', read.etag).send()
    return reply.header('etag', read.etag).send(read.status)
  }

  const conditions = (request: FastifyRequest) => ({
    ...(request.headers['if-match'] !== undefined && { ifMatch: request.headers['if-match'] }),
    ...(request.headers['if-none-match'] !== undefined && {
      ifNoneMatch: request.headers['if-none-match'],
    }),
  })

  // The path as routed, so that `/v1/status-keys/a-1/` and `/v1/status-keys/a%2D1` are the
  // same request as `/v1/status-keys/a-1`: the route's pattern with its decoded parameters.
  const canonicalPath = (request: FastifyRequest) => {
    const params = request.params as Record<string, string>
    return (
      request.routeOptions.url?.replace(/:(\w+)/g, (_, name: string) => params[name] ?? '') ?? ''
    )
  }

  const idempotencyScope = (request: FastifyRequest) => {
    const key = parseIdempotencyKey(request.headers['idempotency-key'])
    return {
      userId: request.user.id,
      key,
      // only a request with a key is ever compared with another
      fingerprint:
        key === undefined
          ? ''
          : requestFingerprint(request.method, canonicalPath(request), request.body),
    }
  }

  app.patch(
    '/v1/status/:statusId',
    {
      schema: {
        summary: 'Update a status by id (partial update)',
        tags,
        security,
        params: StatusIdParamsSchema,
        body: StatusInputSchema,
        response: { 200: StatusSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const asResponse = (result: TaggedStatus): StoredResponse => ({
        statusCode: 200,
        location: null,
        etag: result.etag,
        body: result.status,
      })
      const response = await runIdempotent(deps.db, idempotencyScope(request), async (record) =>
        asResponse(
          await updateStatusById(
            deps,
            caller(request.user),
            request.params.statusId,
            request.body,
            {
              ...conditions(request),
              ...(record && { onWrite: (tx, result) => record(tx, asResponse(result)) }),
            },
          ),
        ),
      )
      return sendStatus(reply, response)
    },
  )

  app.post(
    '/v1/status-keys/:statusKey',
    {
      schema: {
        summary: 'Set a status by your own key: create (201) or update (200)',
        tags,
        security,
        params: StatusKeyParamsSchema,
        body: StatusInputSchema,
        response: { 200: StatusSchema, 201: StatusSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const asResponse = (result: WriteResult): StoredResponse =>
        result.created
          ? {
              statusCode: 201,
              location: `${publicUrl ?? ''}/v1/status/${result.status.id}`,
              etag: result.etag,
              body: result.status,
            }
          : { statusCode: 200, location: null, etag: result.etag, body: result.status }
      const response = await runIdempotent(deps.db, idempotencyScope(request), async (record) =>
        asResponse(
          await setStatusByKey(deps, caller(request.user), request.params.statusKey, request.body, {
            ...conditions(request),
            ...(record && { onWrite: (tx, result) => record(tx, asResponse(result)) }),
          }),
        ),
      )
      return sendStatus(reply, response)
    },
  )

  app.get(
    '/v1/user/status',
    {
      schema: {
        summary: 'List the statuses you own, in creation order',
        description:
          'Without `limit`, every owned status. With `limit`, one page; a `Link: <…>; rel="next"` header names the next.',
        tags,
        security,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(StatusListEntrySchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query
      const page = await listOwned(deps, caller(request.user), { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: '/v1/user/status', limit })
    },
  )

  app.get(
    '/v1/status/:statusId',
    {
      schema: {
        summary: 'Read a status you may see',
        tags,
        security,
        params: StatusIdParamsSchema,
        response: { 200: StatusSchema, 304: NOT_MODIFIED, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) =>
      sendRead(
        request,
        reply,
        await getStatusById(deps, caller(request.user), request.params.statusId),
      ),
  )

  app.get(
    '/v1/status-keys/:statusKey',
    {
      schema: {
        summary: 'Read your status by its key',
        tags,
        security,
        params: StatusKeyParamsSchema,
        response: { 200: StatusSchema, 304: NOT_MODIFIED, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) =>
      sendRead(
        request,
        reply,
        await getStatusByKey(deps, caller(request.user), request.params.statusKey),
      ),
  )

  app.delete(
    '/v1/status/:statusId',
    {
      schema: {
        summary: 'Delete a status you own, with its history',
        tags,
        security,
        params: StatusIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await deleteStatusById(
        deps,
        caller(request.user),
        request.params.statusId,
        conditions(request),
      )
      return reply.code(204).send(null)
    },
  )

  app.delete(
    '/v1/status-keys/:statusKey',
    {
      schema: {
        summary: 'Delete your status by its key',
        tags,
        security,
        params: StatusKeyParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await deleteStatusByKey(
        deps,
        caller(request.user),
        request.params.statusKey,
        conditions(request),
      )
      return reply.code(204).send(null)
    },
  )
}
