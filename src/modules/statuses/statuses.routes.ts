import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { emptyBody } from '../../lib/errors.ts'
import {
  PLAIN_TEXT_BODY_LIMIT,
  PLAIN_TEXT_TYPES,
  usePlainTextBodies,
} from '../../lib/plain-text-body.ts'
import { NOT_MODIFIED } from '../../lib/schema.ts'
import { runIdempotent, type StoredResponse } from '../idempotency/idempotency.service.ts'
import type { ServiceDeps } from '../service-deps.ts'
import {
  ListQuerySchema,
  StatusIdParamsSchema,
  type StatusInput,
  StatusInputSchema,
  StatusKeyParamsSchema,
  StatusListEntrySchema,
  StatusSchema,
  StatusValueTextSchema,
  ValueEndQuerySchema,
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

/**
 * A status's endpoints (docs/api.md#endpoints). Routes translate HTTP to a service call and
 * back, nothing more; what each declares in `config` (plugins/route-facts.ts) its plugins act
 * on: the key it takes, Idempotency-Key, If-Match / If-None-Match.
 */
export const statusRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  publicUrl: string | null
}> = async (app, { deps, publicUrl }) => {
  // no body at all is the same mistake as `{}`: nothing to update
  app.addHook('preValidation', (request, _reply, done) => {
    const schema = request.routeOptions.schema?.body as { type?: string } | undefined
    if (request.body === undefined && schema)
      throw schema.type === 'string' ? emptyBody('Request body must hold the value') : emptyBody()
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

  /** Creates or updates the caller's status by key (201 created, 200 updated), idempotently. */
  async function setByKey(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string,
    input: StatusInput,
  ): Promise<FastifyReply> {
    const asResponse = (result: WriteResult): StoredResponse =>
      result.created
        ? {
            statusCode: 201,
            location: `${publicUrl ?? ''}/v1/status/${result.status.id}`,
            etag: result.etag,
            body: result.status,
          }
        : { statusCode: 200, location: null, etag: result.etag, body: result.status }
    const response = await runIdempotent(deps.db, request.idempotency, async (record) =>
      asResponse(
        await setStatusByKey(deps, request.caller, key, input, {
          ...request.preconditions,
          ...(record && { onWrite: (tx, result) => record(tx, asResponse(result)) }),
        }),
      ),
    )
    return sendStatus(reply, response)
  }

  /** A read of one status, with its ETag (`conditional` answers 304 when it is current). */
  const sendRead = (reply: FastifyReply, read: TaggedStatus) =>
    reply.header('etag', read.etag).send(read.status)

  app.patch(
    '/v1/status/:statusId',
    {
      // the least a write needs; which fields it may change, assertWriteScopes judges
      config: { scope: 'status:value', idempotent: true, conditional: true },
      schema: {
        operationId: 'updateStatus',
        summary: 'Update a status by id (partial update)',
        tags,
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
      const response = await runIdempotent(deps.db, request.idempotency, async (record) =>
        asResponse(
          await updateStatusById(deps, request.caller, request.params.statusId, request.body, {
            ...request.preconditions,
            ...(record && { onWrite: (tx, result) => record(tx, asResponse(result)) }),
          }),
        ),
      )
      return sendStatus(reply, response)
    },
  )

  app.post(
    '/v1/status-keys/:statusKey',
    {
      config: { scope: 'status:value', idempotent: true, conditional: true, located: true },
      schema: {
        operationId: 'setStatusByKey',
        summary: 'Set a status by your own key: create (201) or update (200)',
        tags,
        params: StatusKeyParamsSchema,
        body: StatusInputSchema,
        response: { 200: StatusSchema, 201: StatusSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => setByKey(request, reply, request.params.statusKey, request.body),
  )

  // docs/api.md#set-a-value-as-plain-text: the one-liner of devices and shell scripts, in a
  // scope of its own, where bodies are plain text
  await app.register(async (scope) => {
    usePlainTextBodies(scope, 'value')
    scope.withTypeProvider<TypeBoxTypeProvider>().put(
      '/v1/status-keys/:statusKey/value',
      {
        bodyLimit: PLAIN_TEXT_BODY_LIMIT,
        config: { scope: 'status:value', idempotent: true, conditional: true, located: true },
        schema: {
          operationId: 'setStatusValueByKey',
          summary:
            'Set the value of your status by key, as plain text: create (201) or update (200)',
          description:
            'The body is the value as text (`text/plain`; also taken without a Content-Type, or form-encoded as `curl -d` sends it, never decoded). As `POST /v1/status-keys/{statusKey}` with `{"value": …}`; the query parameters `valueUntil` and `valueAfter` give the value an end (docs/api.md#values-that-end).',
          tags,
          params: StatusKeyParamsSchema,
          querystring: ValueEndQuerySchema,
          consumes: PLAIN_TEXT_TYPES,
          body: StatusValueTextSchema,
          response: { 200: StatusSchema, 201: StatusSchema, ...ERROR_RESPONSES },
        },
      },
      async (request, reply) => {
        const { valueUntil, valueAfter } = request.query
        return setByKey(request, reply, request.params.statusKey, {
          value: request.body,
          ...(valueUntil !== undefined && { valueUntil }),
          ...(valueAfter !== undefined && { valueAfter }),
        })
      },
    )
  })

  app.get(
    '/v1/user/status',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'listMyStatuses',
        summary: 'List the statuses you own, in creation order',
        description:
          'Without `limit`, every owned status. With `limit`, one page; a `Link: <…>; rel="next"` header names the next.',
        tags,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(StatusListEntrySchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query
      const page = await listOwned(deps, request.caller, { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: '/v1/user/status', limit })
    },
  )

  app.get(
    '/v1/status/:statusId',
    {
      config: { scope: 'status:read', conditional: true },
      schema: {
        operationId: 'getStatus',
        summary: 'Read a status you may see',
        tags,
        params: StatusIdParamsSchema,
        response: { 200: StatusSchema, 304: NOT_MODIFIED, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) =>
      sendRead(reply, await getStatusById(deps, request.caller, request.params.statusId)),
  )

  app.get(
    '/v1/status-keys/:statusKey',
    {
      config: { scope: 'status:read', conditional: true },
      schema: {
        operationId: 'getStatusByKey',
        summary: 'Read your status by its key',
        tags,
        params: StatusKeyParamsSchema,
        response: { 200: StatusSchema, 304: NOT_MODIFIED, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) =>
      sendRead(reply, await getStatusByKey(deps, request.caller, request.params.statusKey)),
  )

  app.delete(
    '/v1/status/:statusId',
    {
      config: { scope: 'status:manage', conditional: true },
      schema: {
        operationId: 'deleteStatus',
        summary: 'Delete a status you own, with its history',
        tags,
        params: StatusIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await deleteStatusById(deps, request.caller, request.params.statusId, request.preconditions)
      return reply.code(204).send(null)
    },
  )

  app.delete(
    '/v1/status-keys/:statusKey',
    {
      config: { scope: 'status:manage', conditional: true },
      schema: {
        operationId: 'deleteStatusByKey',
        summary: 'Delete your status by its key',
        tags,
        params: StatusKeyParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await deleteStatusByKey(deps, request.caller, request.params.statusKey, request.preconditions)
      return reply.code(204).send(null)
    },
  )
}
