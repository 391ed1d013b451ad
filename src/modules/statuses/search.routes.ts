import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import type { ServiceDeps } from '../service-deps.ts'
import {
  DEFAULT_SEARCH_PAGE,
  SearchQuerySchema,
  SearchResultSchema,
  searchStatuses,
} from './search.service.ts'

/** Discovery (docs/accounts.md#discovery): verified users find listed public statuses. */
export const searchRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  publicUrl: string | null
}> = async (app, { deps, publicUrl }) => {
  app.get(
    '/v1/search/statuses',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'searchStatuses',
        summary: 'Find listed public statuses by words of their name',
        description: `Every word of \`q\` must appear in the name, in any case; \`%\` and \`_\` are plain characters. Only public statuses their owners listed are found. Always paged (${DEFAULT_SEARCH_PAGE} per page without \`limit\`); a \`Link: <…>; rel="next"\` header names the next page.`,
        tags: ['statuses'],
        querystring: SearchQuerySchema,
        response: { 200: Type.Array(SearchResultSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { q, limit = DEFAULT_SEARCH_PAGE, cursor } = request.query
      const page = await searchStatuses(deps, { q, limit, cursor }, request.caller.limits)
      if (page.nextCursor !== null) {
        const next = new URLSearchParams({ q, limit: String(limit), cursor: page.nextCursor })
        reply.header('link', `<${publicUrl ?? ''}/v1/search/statuses?${next}>; rel="next"`)
      }
      return page.items
    },
  )
}
