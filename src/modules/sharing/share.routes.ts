import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { Db, StatusRow } from '../../db/database.ts'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { notFound } from '../../lib/errors.ts'
import { Type } from 'typebox'
import { HistoryEntrySchema } from '../history/history.schemas.ts'
import { listStatusHistory, ownerPlanOf } from '../history/history.service.ts'
import { ListQuerySchema } from '../statuses/statuses.schemas.ts'
import { ShareViewSchema, toShareView } from './share-view.ts'
import { findStatusByShareId } from './sharing.repository.ts'
import { ShareIdParamsSchema, StatusUserSchema } from './sharing.schemas.ts'
import { listStatusUsers, type SharingDeps } from './sharing.service.ts'

/** The public status with this share id; private and unknown are the same 404. */
export async function publicStatus(db: Db, shareId: string): Promise<StatusRow> {
  const status = await findStatusByShareId(db, shareId)
  // 404 for private too: a share id must not reveal that a private status exists
  if (status?.access_type !== 'public') throw notFound('Status not found')
  return status
}

const tags = ['public']

/**
 * onSend hook of the anonymous `/v1/share/…` routes, errors included: public data for any page
 * to embed (no credentials are involved), and always revalidated.
 */
export function publicViewHeaders(
  _request: FastifyRequest,
  reply: FastifyReply,
  _payload: unknown,
  done: HookHandlerDoneFunction,
): void {
  reply.header('access-control-allow-origin', '*')
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-cache')
  done()
}

/**
 * The page size of the public lists when the request names none. Anyone may ask, without a
 * rate limit: a whole history (500 000 entries, 30 MB) held the event loop for seconds.
 */
export const PUBLIC_PAGE_SIZE = 100

/**
 * Anonymous views of public statuses (SPEC §6): no API key, no per-user rate limit. A key, if
 * sent, is ignored: these answer what anyone on the internet sees. Their lists are always
 * paged (PUBLIC_PAGE_SIZE without `limit`).
 */
export const shareRoutes: FastifyPluginAsyncTypebox<{
  deps: SharingDeps
  publicUrl: string | null
}> = async (app, { deps, publicUrl }) => {
  app.addHook('onSend', publicViewHeaders)

  app.get(
    '/v1/share/:shareId',
    {
      schema: {
        summary: 'Public view of a public status (no API key)',
        tags,
        security: [],
        params: ShareIdParamsSchema,
        response: { 200: ShareViewSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const status = await publicStatus(deps.db, request.params.shareId)
      return toShareView(status, await ownerPlanOf(deps.db, deps.plans, status))
    },
  )

  app.get(
    '/v1/share/:shareId/history',
    {
      schema: {
        summary: 'History of a public status, when its accessTypeHistory is public',
        tags,
        security: [],
        params: ShareIdParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(HistoryEntrySchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit = PUBLIC_PAGE_SIZE, cursor } = request.query
      const { shareId } = request.params
      const status = await publicStatus(deps.db, shareId)
      const page = await listStatusHistory(deps, { status, role: null }, { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: `/v1/share/${shareId}/history`, limit })
    },
  )

  app.get(
    '/v1/share/:shareId/users',
    {
      schema: {
        summary: 'User list of a public status, when its accessTypeUserList is public',
        tags,
        security: [],
        params: ShareIdParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(StatusUserSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit = PUBLIC_PAGE_SIZE, cursor } = request.query
      const { shareId } = request.params
      const status = await publicStatus(deps.db, shareId)
      const page = await listStatusUsers(deps, { status, role: null }, { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: `/v1/share/${shareId}/users`, limit })
    },
  )
}
