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
      schema: {
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
      schema: {
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
