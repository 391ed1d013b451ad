import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { StringEnum } from '../../lib/schema.ts'
import { authLevelOf } from './users.service.ts'

export const CheckAuthSchema = Type.Object({
  userId: Type.String(),
  name: Type.String(),
  authLevel: StringEnum(['verified', 'authenticated']),
  plan: Type.String(),
})

/** GET /v1/checkAuth — who the key belongs to; works at either authorization level. */
export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/checkAuth',
    {
      config: { authLevel: 'authenticated' },
      schema: {
        summary: 'Check an API key: its user, authorization level and plan',
        tags: ['users'],
        security: [{ apiKey: [] }, { bearer: [] }],
        response: { 200: CheckAuthSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => ({
      userId: request.user.id,
      name: request.user.name,
      authLevel: authLevelOf(request.user),
      plan: request.user.plan,
    }),
  )
}
