import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { StringEnum } from '../../lib/schema.ts'

export const CheckAuthSchema = Type.Object(
  {
    userId: Type.String(),
    name: Type.String(),
    authLevel: StringEnum(['verified', 'authenticated']),
    plan: Type.String(),
  },
  {
    $id: 'CheckAuth',
    description: 'Who the key belongs to',
    examples: [
      { userId: 'svd95C2ndr5UElNNoAhG6', name: 'admin', authLevel: 'verified', plan: 'pro' },
    ],
  },
)

/** GET /v1/checkAuth — who the key belongs to; works at either authorization level. */
export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/checkAuth',
    {
      config: { auth: 'authenticated' },
      schema: {
        operationId: 'checkAuth',
        summary: 'Check an API key: its user, authorization level and plan',
        tags: ['users'],
        response: { 200: CheckAuthSchema, ...ERROR_RESPONSES },
      },
    },
    async ({ caller }) => ({
      userId: caller.userId,
      name: caller.name,
      authLevel: caller.authLevel,
      plan: caller.plan,
    }),
  )
}
