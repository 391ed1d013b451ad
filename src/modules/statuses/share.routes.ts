import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { publicViewHeaders } from '../../lib/response-headers.ts'
import { HistoryEntrySchema } from './history.schemas.ts'
import { listStatusHistory, ownerPlanOf } from './history.service.ts'
import { ShareViewSchema, toShareView } from './share-view.ts'
import { ShareIdParamsSchema, StatusUserSchema } from './sharing.schemas.ts'
import { listStatusUsers, publicStatus, type SharingDeps } from './sharing.service.ts'
import { ListQuerySchema } from './statuses.schemas.ts'

const tags = ['public']

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
