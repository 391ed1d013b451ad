import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ErrorSchema } from '../../lib/error-schema.ts'
import { unavailable } from '../../lib/errors.ts'
import { VERSION } from '../../lib/version.ts'
import type { WriteHealth } from './write-health.ts'

const REFUSED = {
  full: 'Storage refuses writes: it is full',
  readOnly: 'Storage refuses writes: it is read-only',
} as const

/** Liveness and readiness probes for process supervisors and load balancers. */
export const healthRoutes: FastifyPluginAsyncTypebox<{
  ping: () => Promise<boolean>
  /** What the last writes found (write-health.ts). */
  writes: Pick<WriteHealth, 'refusal'>
}> = async (app, { ping, writes }) => {
  app.get(
    '/healthz',
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'checkLiveness',
        summary: 'Liveness: the process is up',
        description:
          'Also says which version of statusd answers (semver, from its package), e.g. to check that an upgrade is live.',
        tags: ['operations'],
        response: {
          200: Type.Object(
            {
              status: Type.Literal('ok'),
              version: Type.String({ description: "statusd's version (semver)" }),
            },
            { examples: [{ status: 'ok', version: '0.1.0' }] },
          ),
        },
      },
    },
    async () => ({ status: 'ok' as const, version: VERSION }),
  )
  app.get(
    '/readyz',
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'checkReadiness',
        summary: 'Readiness: storage answers, and takes writes',
        description:
          '503 while storage cannot be reached, and after a write was refused because storage is full or read-only, until a write succeeds again; the message says which.',
        tags: ['operations'],
        response: { 200: Type.Object({ status: Type.Literal('ready') }), 503: ErrorSchema },
      },
    },
    async () => {
      if (!(await ping())) throw unavailable()
      const refused = await writes.refusal()
      if (refused !== undefined) throw unavailable(REFUSED[refused])
      return { status: 'ready' as const }
    },
  )
}
