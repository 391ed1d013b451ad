import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Db } from '../../db/database.ts'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import {
  AuditEventSchema,
  AuditQuerySchema,
  SecurityEventSchema,
  SecurityEventsQuerySchema,
} from './audit.schemas.ts'
import { auditEvents, DEFAULT_PAGE, eventsOfUser } from './audit.service.ts'

const PAGING =
  'Newest first, the last 90 days; 50 a page unless `limit` says otherwise, and a `Link: <…>; rel="next"` header names the next page.'

/** The security log (docs/security.md#security-log): your own, and every account's for operators. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ db: Db; publicUrl: string | null }> = async (
  app,
  { db, publicUrl },
) => {
  app.get(
    '/v1/user/security-events',
    {
      config: { auth: 'authenticated', scope: 'account' },
      schema: {
        operationId: 'listSecurityEvents',
        summary: 'Your security log: sign-ins, failed sign-ins and changes to your credentials',
        description: PAGING,
        tags: ['accounts'],
        querystring: SecurityEventsQuerySchema,
        response: { 200: Type.Array(SecurityEventSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query
      const page = await eventsOfUser(db, request.caller.userId, { limit, cursor })
      return pageItems(reply, page, {
        publicUrl,
        path: '/v1/user/security-events',
        limit: limit ?? DEFAULT_PAGE,
      })
    },
  )

  app.get(
    '/v1/admin/audit',
    {
      config: { admin: true, scope: 'admin' },
      schema: {
        operationId: 'listAuditEvents',
        summary: "Every account's security log and the operators' actions (operators only)",
        description: `${PAGING} \`userId\` and \`kind\` narrow it.`,
        tags: ['admin'],
        querystring: AuditQuerySchema,
        response: { 200: Type.Array(AuditEventSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit, cursor, userId, kind } = request.query
      const page = await auditEvents(db, { userId, kind }, { limit, cursor })
      if (page.nextCursor !== null) {
        // the next page keeps the filters
        const query = new URLSearchParams({
          ...(userId !== undefined && { userId }),
          ...(kind !== undefined && { kind }),
          limit: String(limit ?? DEFAULT_PAGE),
          cursor: page.nextCursor,
        })
        reply.header('link', `<${publicUrl ?? ''}/v1/admin/audit?${query}>; rel="next"`)
      }
      return page.items
    },
  )
}
