import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { StatusIdParamsSchema } from '../statuses/statuses.schemas.ts'
import { RuleInputSchema, RuleSchema } from './rules.schemas.ts'
import { deleteRuleOf, getRule, putRule } from './rules.service.ts'

const tags = ['notifications']

/**
 * Your notification rule for a status (docs/api.md#notification-rules). note: `status:read`
 * for all three: a rule changes nothing about the status, only what its user is told of a
 * status the key may read (and could watch live anyway).
 */
export const ruleRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (
  app,
  { deps },
) => {
  app.get(
    '/v1/status/:statusId/notifications',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'getNotificationRule',
        summary: 'Read your notification rule for a status',
        description:
          'Anyone who may read the status. Without a rule: 200 with `when: null` (you are not notified).',
        tags,
        params: StatusIdParamsSchema,
        response: { 200: RuleSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => getRule(deps, request.caller, request.params.statusId),
  )

  app.put(
    '/v1/status/:statusId/notifications',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'setNotificationRule',
        summary: 'Set your notification rule for a status (replaces yours)',
        description:
          'Anyone who may read the status. `channels` must all be yours (422 naming the others); absent or null: all of your channels.',
        tags,
        params: StatusIdParamsSchema,
        body: RuleInputSchema,
        response: { 200: RuleSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => putRule(deps, request.caller, request.params.statusId, request.body),
  )

  app.delete(
    '/v1/status/:statusId/notifications',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'deleteNotificationRule',
        summary: 'Turn your notifications for a status off',
        description: '204 whether or not you had a rule.',
        tags,
        params: StatusIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await deleteRuleOf(deps, request.caller, request.params.statusId)
      return reply.code(204).send(null)
    },
  )
}
