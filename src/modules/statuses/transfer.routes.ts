import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { requesterOf } from '../audit/security-events.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { RoleInvitationSchema } from './invitations.schemas.ts'
import { StatusIdParamsSchema } from './statuses.schemas.ts'
import { TransferBodySchema } from './transfer.schemas.ts'
import { offerTransfer, withdrawTransfer } from './transfer.service.ts'

/** Handing a status to another user (docs/sharing.md#transfer). In the API-key scope. */
export const transferRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (
  app,
  { deps },
) => {
  app.post(
    '/v1/status/:statusId/transfer',
    {
      config: { scope: 'status:manage', provenEmail: true },
      schema: {
        operationId: 'offerTransfer',
        summary: 'Offer the status to another user: a pending invitation for the role owner',
        description:
          'Owner only. The user accepts (`POST /v1/user/invitations/:id/accept`: they own the status, you become an updater) or declines; you withdraw it with `DELETE /v1/status/:statusId/transfer`. A new offer withdraws an earlier one. The user does not exist: 404; yourself: 409.',
        tags: ['sharing'],
        params: StatusIdParamsSchema,
        body: TransferBodySchema,
        response: { 202: RoleInvitationSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const invitation = await offerTransfer(
        deps,
        request.caller,
        request.params.statusId,
        request.body.userId,
        requesterOf(request),
      )
      return reply.code(202).send(invitation)
    },
  )

  app.delete(
    '/v1/status/:statusId/transfer',
    {
      config: { scope: 'status:manage' },
      schema: {
        operationId: 'withdrawTransfer',
        summary: 'Withdraw the pending transfer of the status (owner only)',
        description:
          'Everything stays as it was, a role the user holds included. No transfer pending: 404.',
        tags: ['sharing'],
        params: StatusIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await withdrawTransfer(deps, request.caller, request.params.statusId)
      return reply.code(204).send(null)
    },
  )
}
