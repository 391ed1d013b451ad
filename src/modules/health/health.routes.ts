import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ErrorSchema } from '../../lib/error-schema.ts'
import { unavailable } from '../../lib/errors.ts'

/** Liveness and readiness probes for process supervisors and load balancers. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ ping: () => Promise<boolean> }> = async (
  app,
  { ping },
) => {
  app.get(
    '/healthz',
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'checkLiveness',
        summary: 'Liveness: the process is up',
        tags: ['operations'],
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  )
  app.get(
    '/readyz',
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'checkReadiness',
        summary: 'Readiness: storage answers',
        tags: ['operations'],
        response: { 200: Type.Object({ status: Type.Literal('ready') }), 503: ErrorSchema },
      },
    },
    async () => {
      if (!(await ping())) throw unavailable()
      return { status: 'ready' as const }
    },
  )
}
