import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { requesterOf } from '../audit/security-events.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { RoleInvitationSchema } from './invitations.schemas.ts'
import { grantRole } from './invitations.service.ts'
import {
  GrantBodySchema,
  StatusUserParamsSchema,
  StatusUserSchema,
  SubscriptionSchema,
} from './sharing.schemas.ts'
import {
  accessById,
  listStatusUsers,
  listSubscriptions,
  revokeRole,
  subscribe,
  unsubscribe,
} from './sharing.service.ts'
import { ListQuerySchema, StatusIdParamsSchema } from './statuses.schemas.ts'

const tags = ['sharing']
const PAGING =
  'Without `limit`, every entry. With `limit`, one page; a `Link: <…>; rel="next"` header names the next.'

/** Roles on a status (docs/sharing.md#roles): grant, revoke, subscribe, leave, and the lists. */
export const sharingRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  publicUrl: string | null
}> = async (app, { deps, publicUrl }) => {
  app.put(
    '/v1/status/:statusId/users/:userId',
    {
      config: { scope: 'status:manage', provenEmail: true },
      schema: {
        operationId: 'grantRole',
        summary: 'Offer a user the updater or subscriber role, or lower theirs (owner only)',
        description:
          'A role is never imposed: for a user without that role (or a subscriber to be made updater) the answer is 202 with a pending invitation, which they accept or decline; it replaces an earlier one. The role they hold, or a lower one, takes effect at once: 200 with their user-list entry. The owner cannot be given a role (409 conflict).',
        tags,
        params: StatusUserParamsSchema,
        body: GrantBodySchema,
        response: { 200: StatusUserSchema, 202: RoleInvitationSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { statusId, userId } = request.params
      const outcome = await grantRole(
        deps,
        request.caller,
        statusId,
        userId,
        request.body.role,
        requesterOf(request),
      )
      return outcome.kind === 'granted'
        ? reply.code(200).send(outcome.user)
        : reply.code(202).send(outcome.invitation)
    },
  )

  app.delete(
    '/v1/status/:statusId/users/:userId',
    {
      config: { scope: 'status:manage' },
      schema: {
        operationId: 'revokeRole',
        summary: "Revoke a user's role, and withdraw their pending invitation (owner only)",
        tags,
        params: StatusUserParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { statusId, userId } = request.params
      await revokeRole(deps, request.caller, statusId, userId, requesterOf(request))
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/v1/status/:statusId/users',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'listStatusUsers',
        summary: 'Everyone with a role on the status, the owner first (per accessTypeUserList)',
        description: PAGING,
        tags,
        params: StatusIdParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(StatusUserSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query
      const { statusId } = request.params
      const access = await accessById(deps.db, request.caller, statusId)
      const page = await listStatusUsers(deps, access, { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: `/v1/status/${statusId}/users`, limit })
    },
  )

  app.post(
    '/v1/status/:statusId/subscription',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'subscribeToStatus',
        summary: 'Subscribe to a status you can see (201; 200 when you have a role already)',
        tags,
        params: StatusIdParamsSchema,
        response: { 200: SubscriptionSchema, 201: SubscriptionSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { subscription, created } = await subscribe(
        deps,
        request.caller,
        request.params.statusId,
      )
      return reply.code(created ? 201 : 200).send(subscription)
    },
  )

  app.delete(
    '/v1/status/:statusId/subscription',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'leaveStatus',
        summary: 'Leave a status: removes your own role on it',
        tags,
        params: StatusIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await unsubscribe(deps, request.caller, request.params.statusId, requesterOf(request))
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/v1/user/subscriptions',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'listMySubscriptions',
        summary: 'Statuses you have a role on but do not own, in the order you got the role',
        description: PAGING,
        tags,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(SubscriptionSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query
      const page = await listSubscriptions(deps, request.caller, { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: '/v1/user/subscriptions', limit })
    },
  )
}
