import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { ExportSchema } from './export.schemas.ts'
import { exportDocument } from './export.service.ts'

export interface ExportRouteOptions {
  db: Kysely<DB>
  clock: Clock
}

/**
 * GET /v1/user/export (docs/api.md#export-your-data): everything statusd holds about the
 * caller, as a JSON attachment written while it is read.
 */
export const exportRoutes: FastifyPluginAsyncTypebox<ExportRouteOptions> = async (
  app,
  { db, clock },
) => {
  app.get(
    '/v1/user/export',
    {
      // your own account: a user whose e-mail is not verified yet may take their data too
      config: { auth: 'authenticated', scope: 'account' },
      schema: {
        operationId: 'exportAccount',
        summary: 'Export your data: one JSON document, as an attachment',
        description:
          'Your profile, the statuses you own with their whole history, your roles, invitations, share links (without tokens), boards, channels (without secrets), rules, schedules, API keys, sessions and passkeys (metadata only) and your security log. Streamed: it starts at once, however long the history.',
        tags: ['accounts'],
        response: {
          200: {
            description: 'The document (`Content-Disposition: attachment`)',
            content: { 'application/json': { schema: ExportSchema } },
          },
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request, reply) => {
      const nowMs = clock.now()
      const day = new Date(nowMs).toISOString().slice(0, 10)
      const body = Readable.from(exportDocument({ db, nowMs }, request.caller.userId), {
        objectMode: false,
      })
      // note: the document streams as it is read; the route's typed replies know whole bodies only
      return (reply as FastifyReply)
        .type('application/json; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="statusd-export-${day}.json"`)
        .send(body)
    },
  )
}
