import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { emptyBody } from '../../lib/errors.ts'
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
  type StatusDeps,
  setStatusByKey,
  updateStatusById,
} from './statuses.service.ts'

const tags = ['statuses']
const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }]

/** Operations 1–6 of SPEC §2. Routes translate HTTP to a service call and back, nothing more. */
export const statusRoutes: FastifyPluginAsyncTypebox<{
  deps: StatusDeps
  publicUrl: string | null
}> = async (app, { deps, publicUrl }) => {
  const caller = (user: { id: string; plan: string }) => ({ userId: user.id, plan: user.plan })

  // no body at all is the same mistake as `{}`: nothing to update
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) throw emptyBody()
  })

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
    (request) =>
      updateStatusById(deps, caller(request.user), request.params.statusId, request.body),
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
      const { status, created } = await setStatusByKey(
        deps,
        caller(request.user),
        request.params.statusKey,
        request.body,
      )
      if (created) reply.code(201).header('location', `${publicUrl ?? ''}/v1/status/${status.id}`)
      return status
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
      if (page.nextCursor !== null && limit !== undefined)
        reply.header(
          'link',
          `<${publicUrl ?? ''}/v1/user/status?limit=${limit}&cursor=${page.nextCursor}>; rel="next"`,
        )
      return page.items
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
        response: { 200: StatusSchema, ...ERROR_RESPONSES },
      },
    },
    (request) => getStatusById(deps, caller(request.user), request.params.statusId),
  )

  app.get(
    '/v1/status-keys/:statusKey',
    {
      schema: {
        summary: 'Read your status by its key',
        tags,
        security,
        params: StatusKeyParamsSchema,
        response: { 200: StatusSchema, ...ERROR_RESPONSES },
      },
    },
    (request) => getStatusByKey(deps, caller(request.user), request.params.statusKey),
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
      await deleteStatusById(deps, caller(request.user), request.params.statusId)
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
      await deleteStatusByKey(deps, caller(request.user), request.params.statusKey)
      return reply.code(204).send(null)
    },
  )
}
