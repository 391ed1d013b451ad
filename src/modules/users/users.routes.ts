import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { scopesFor } from '../keys/scopes.ts'
import { CheckAuthSchema } from './users.schemas.ts'

/** GET /v1/checkAuth — who the key belongs to; works at either authorization level. */
export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/checkAuth',
    {
      config: { auth: 'authenticated' },
      schema: {
        operationId: 'checkAuth',
        summary: 'Check an API key: its user, authorization level, plan, scopes and statuses',
        description:
          'Needs no scope: any working key, limited or not, may ask who it is and what it may do.',
        tags: ['users'],
        response: { 200: CheckAuthSchema, ...ERROR_RESPONSES },
      },
    },
    async ({ caller }) => ({
      userId: caller.userId,
      name: caller.name,
      authLevel: caller.authLevel,
      plan: caller.plan,
      credential: {
        kind: caller.credential.kind,
        id: caller.credential.id,
        // a session may do all its user may: every scope, every status
        scopes: [
          ...(caller.credential.kind === 'key'
            ? caller.credential.scopes
            : scopesFor(caller.admin)),
        ],
        statusIds:
          caller.credential.kind === 'key' && caller.credential.statusIds !== null
            ? [...caller.credential.statusIds]
            : null,
      },
    }),
  )
}
