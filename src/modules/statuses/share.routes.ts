import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { HistoryEntrySchema } from './history.schemas.ts'
import { publicHistory, publicUsers, publicView } from './share.service.ts'
import { ShareViewSchema } from './share-view.ts'
import { ShareIdParamsSchema, StatusUserSchema } from './sharing.schemas.ts'
import { ListQuerySchema } from './statuses.schemas.ts'

const tags = ['public']
// anyone may read these, from any page (docs/sharing.md#public-views-no-api-key)
const config = { auth: 'none', publicView: true } as const

/**
 * The page size of the public lists when the request names none. Anyone may ask, without a
 * rate limit: a whole history (500 000 entries, 30 MB) held the event loop for seconds.
 */
export const PUBLIC_PAGE_SIZE = 100

/**
 * Anonymous views of public statuses (docs/sharing.md#public-views-no-api-key): no API key,
 * no per-user rate limit. A key, if sent, is ignored: these answer what anyone on the
 * internet sees. Their lists are always paged (PUBLIC_PAGE_SIZE without `limit`).
 */
export const shareRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  publicUrl: string | null
}> = async (app, { deps, publicUrl }) => {
  app.get(
    '/v1/share/:shareId',
    {
      config,
      schema: {
        operationId: 'getSharedStatus',
        summary: 'Public view of a public status (no API key)',
        tags,
        params: ShareIdParamsSchema,
        response: { 200: ShareViewSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => publicView(deps, request.params.shareId),
  )

  app.get(
    '/v1/share/:shareId/history',
    {
      config,
      schema: {
        operationId: 'listSharedStatusHistory',
        summary: 'History of a public status, when its accessTypeHistory is public',
        tags,
        params: ShareIdParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(HistoryEntrySchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit = PUBLIC_PAGE_SIZE, cursor } = request.query
      const { shareId } = request.params
      const page = await publicHistory(deps, shareId, { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: `/v1/share/${shareId}/history`, limit })
    },
  )

  app.get(
    '/v1/share/:shareId/users',
    {
      config,
      schema: {
        operationId: 'listSharedStatusUsers',
        summary: 'User list of a public status, when its accessTypeUserList is public',
        tags,
        params: ShareIdParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(StatusUserSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit = PUBLIC_PAGE_SIZE, cursor } = request.query
      const { shareId } = request.params
      const page = await publicUsers(deps, shareId, { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: `/v1/share/${shareId}/users`, limit })
    },
  )
}
