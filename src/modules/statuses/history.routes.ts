import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import type { ServiceDeps } from '../service-deps.ts'
import {
  DurationsQuerySchema,
  HistoryDurationsSchema,
  HistoryEntrySchema,
} from './history.schemas.ts'
import { listStatusHistory } from './history.service.ts'
import { statusDurations } from './history-durations.ts'
import { accessById } from './sharing.service.ts'
import { ListQuerySchema, MAX_PAGE_SIZE, StatusIdParamsSchema } from './statuses.schemas.ts'

/**
 * GET /v1/status/:statusId/history (docs/sharing.md#history) and …/history/durations
 * (docs/api.md#time-in-each-value).
 */
export const historyRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  publicUrl: string | null
}> = async (app, { deps, publicUrl }) => {
  app.get(
    '/v1/status/:statusId/history',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'listStatusHistory',
        summary: 'Value updates of a status, newest first (per accessTypeHistory)',
        description:
          'The value given at creation is the oldest entry. Entries older than the owner\'s plan retention (`historyDays`) are gone, except the one that set the current value. One page of `limit` entries (1 000 without it), and a `Link: <…>; rel="next"` header while there are more.',
        tags: ['sharing'],
        params: StatusIdParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(HistoryEntrySchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      // note: a history grows with time, not with what a plan allows (a write a second is
      // 31 million entries a year): without `limit`, the largest page, never all of it
      const { limit = MAX_PAGE_SIZE, cursor } = request.query
      const { statusId } = request.params
      const access = await accessById(deps.db, request.caller, statusId)
      const page = await listStatusHistory(
        deps,
        { ...access, viewerId: request.caller.userId },
        { limit, cursor },
      )
      return pageItems(reply, page, { publicUrl, path: `/v1/status/${statusId}/history`, limit })
    },
  )

  app.get(
    '/v1/status/:statusId/history/durations',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'statusHistoryDurations',
        summary: 'Time in each value over a range (per accessTypeHistory)',
        description:
          "Sums, from the history, how long the status held each value between `from` and `to` (now when absent or later): the value in force at `from` counts from `from`, the current value until `to`. Time before the status was created, or before its oldest entry within the owner's retention (`historyDays`), has no value and is left out of `trackedSeconds`.",
        tags: ['sharing'],
        params: StatusIdParamsSchema,
        querystring: DurationsQuerySchema,
        response: { 200: HistoryDurationsSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const access = await accessById(deps.db, request.caller, request.params.statusId)
      return statusDurations(deps, access, request.query)
    },
  )
}
