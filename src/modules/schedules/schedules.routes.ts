import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { StatusIdParamsSchema } from '../statuses/statuses.schemas.ts'
import { MAX_SCHEDULE_ENTRIES, ScheduleInputSchema, ScheduleSchema } from './schedules.schemas.ts'
import { deleteSchedule, getSchedule, putSchedule } from './schedules.service.ts'

const tags = ['schedules']

/** A status's schedule (docs/api.md#schedules): its owner's, with a session or `status:manage`. */
export const scheduleRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  /** Tells this instance's timed worker that a schedule's next fire moved. */
  wake: () => void
}> = async (app, { deps, wake }) => {
  app.get(
    '/v1/status/:statusId/schedule',
    {
      config: { scope: 'status:manage' },
      schema: {
        operationId: 'getSchedule',
        summary: 'The schedule of a status you own, and its next fires',
        description:
          'Without a schedule: 200 with `timezone: null` and no entries (nothing fires).',
        tags,
        params: StatusIdParamsSchema,
        response: { 200: ScheduleSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => getSchedule(deps, request.caller, request.params.statusId),
  )

  app.put(
    '/v1/status/:statusId/schedule',
    {
      config: { scope: 'status:manage' },
      schema: {
        operationId: 'putSchedule',
        summary: 'Set the schedule of a status you own (replaces the one it had)',
        description: `At most ${MAX_SCHEDULE_ENTRIES} entries. Each fire sets the entry's value as an ordinary change by you, and cancels a pending \`valueUntil\`. An invalid \`cron\` or \`timezone\` is 400 validationError naming the field (\`entries.0.cron\`, \`timezone\`).`,
        tags,
        params: StatusIdParamsSchema,
        body: ScheduleInputSchema,
        response: { 200: ScheduleSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const schedule = await putSchedule(
        deps,
        request.caller,
        request.params.statusId,
        request.body,
      )
      wake()
      return schedule
    },
  )

  app.delete(
    '/v1/status/:statusId/schedule',
    {
      config: { scope: 'status:manage' },
      schema: {
        operationId: 'deleteSchedule',
        summary: 'Remove the schedule of a status you own',
        description: '204 whether or not it had one. The value stays as it is.',
        tags,
        params: StatusIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await deleteSchedule(deps, request.caller, request.params.statusId)
      return reply.code(204).send(null)
    },
  )
}
