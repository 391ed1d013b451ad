import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { viewEtag } from '../../lib/etag.ts'
import type { RenderCache } from '../../lib/render-cache.ts'
import { PUBLIC_VIEW_CACHE_CONTROL } from '../../lib/response-headers.ts'
import { NOT_MODIFIED } from '../../lib/schema.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { HistoryEntrySchema } from './history.schemas.ts'
import { publicHistory, publicUsers, publicView } from './share.service.ts'
import { ShareViewSchema } from './share-view.ts'
import { ShareIdParamsSchema, StatusUserSchema } from './sharing.schemas.ts'
import { ListQuerySchema } from './statuses.schemas.ts'

const tags = ['public']
// anyone may read these, from any page (docs/sharing.md#public-views-no-api-key), as often
// as the anonymous limit allows (docs/api.md#rate-limits)
const config = { auth: 'none', publicView: true, anonymousLimit: true } as const

/**
 * The page size of the public lists when the request names none. Anyone may ask, without a
 * rate limit: a busy status's whole history in one answer would hold the event loop, and
 * every other request, while it is read and written out.
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
  /** The rendered views, by share id, until their status changes (docs/sharing.md#caching-of-public-views). */
  rendered: RenderCache
}> = async (app, { deps, publicUrl, rendered }) => {
  app.get(
    '/v1/share/:shareId',
    {
      // note: `conditional` answers 304 to a current If-None-Match
      config: { ...config, conditional: true },
      schema: {
        operationId: 'getSharedStatus',
        summary: 'Public view of a public status (no API key)',
        description:
          'Carries an ETag (`If-None-Match` with it: 304) and `Cache-Control: public, no-cache`: any cache may keep it and revalidates it on every use.',
        tags,
        params: ShareIdParamsSchema,
        response: { 200: ShareViewSchema, 304: NOT_MODIFIED, ...ERROR_RESPONSES },
      },
    },
    (request, reply) => {
      const { shareId } = request.params
      const render = async () => {
        const { view, version, statusId } = await publicView(deps, shareId)
        // serialized here, by the route's own schema, so that the ETag covers the bytes sent
        const body = reply.serialize(view) as string
        const etag = viewEtag(view.shareId, version, body)
        return {
          owner: statusId,
          rendered: {
            body,
            etag,
            headers: {
              etag,
              'cache-control': PUBLIC_VIEW_CACHE_CONTROL,
              'content-type': 'application/json; charset=utf-8',
            },
          },
        }
      }
      // note: the untyped reply, since the typed one takes the schema's object, not its text
      return rendered.serve(`json\0${shareId}`, render, (view) => {
        ;(reply as FastifyReply).headers(view.headers).send(view.body)
      })
    },
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
