import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { PRIVATE_LINK_VIEW_HEADERS } from '../../lib/response-headers.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { HistoryEntrySchema } from './history.schemas.ts'
import {
  CreateShareLinkBodySchema,
  createShareLink,
  followLink,
  linkHistory,
  linkUsers,
  linkView,
  listShareLinks,
  NewShareLinkSchema,
  revokeShareLink,
  ShareLinkParamsSchema,
  ShareLinkSchema,
  ShareLinkTokenParamsSchema,
} from './share-links.service.ts'
import { ShareViewSchema } from './share-view.ts'
import { StatusUserSchema } from './sharing.schemas.ts'
import { ListQuerySchema, StatusIdParamsSchema, StatusSchema } from './statuses.schemas.ts'

const tags = ['share links']

/** The page size of a link's lists when the request names none: as the public lists'. */
const LINK_PAGE_SIZE = 100

/**
 * The owner's private share links of a status, and following a status through one
 * (docs/api.md#private-share-links). In the scope that takes a key or a session.
 */
export const shareLinkRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  publicUrl: string | null
}> = async (app, { deps, publicUrl }) => {
  app.post(
    '/v1/status/:statusId/share-links',
    {
      config: { scope: 'status:manage', bodyOptional: true, provenEmail: true },
      schema: {
        operationId: 'createShareLink',
        summary: 'Make a private share link to a status you own (its URL is shown once)',
        description:
          "Whoever holds the link sees the status read-only (page, JSON, badge, live stream), whatever its accessType, until it expires or is revoked. `expiresAt` defaults to, and may not pass, the owner's plan's `shareLinkDays` from now (400 validationError). A status has at most 100 links that work at once (409 conflict).",
        tags,
        params: StatusIdParamsSchema,
        body: CreateShareLinkBodySchema,
        response: { 201: NewShareLinkSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const link = await createShareLink(
        deps,
        request.caller,
        request.params.statusId,
        request.body ?? {},
        publicUrl,
      )
      return reply.code(201).send(link)
    },
  )

  app.get(
    '/v1/status/:statusId/share-links',
    {
      config: { scope: 'status:manage' },
      schema: {
        operationId: 'listShareLinks',
        summary:
          'Private share links of a status you own: those that work, and those ended in the last 7 days',
        description: 'Newest first, at most 200. Never a token.',
        tags,
        params: StatusIdParamsSchema,
        response: { 200: Type.Array(ShareLinkSchema), ...ERROR_RESPONSES },
      },
    },
    async (request) => listShareLinks(deps, request.caller, request.params.statusId),
  )

  app.delete(
    '/v1/status/:statusId/share-links/:linkId',
    {
      config: { scope: 'status:manage' },
      schema: {
        operationId: 'revokeShareLink',
        summary: 'Revoke a private share link: it stops working, and its open streams end, at once',
        tags,
        params: ShareLinkParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { statusId, linkId } = request.params
      await revokeShareLink(deps, request.caller, statusId, linkId)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/v1/share-links/:token/follow',
    {
      config: { scope: 'status:read' },
      schema: {
        operationId: 'followShareLink',
        summary:
          'Follow the status a private share link shows: you become a subscriber (201; 200 with a role already)',
        description:
          'The subscriber role stays when the link ends. The owner following their own status: 409 conflict. A link that does not work: 404.',
        tags,
        params: ShareLinkTokenParamsSchema,
        response: { 200: StatusSchema, 201: StatusSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { status, created } = await followLink(deps, request.caller, request.params.token)
      return reply.code(created ? 201 : 200).send(status)
    },
  )
}

// whoever holds the token, no key; as often as the anonymous limit allows
const anonymous = { auth: 'none', anonymousLimit: true, anyOrigin: true } as const

/**
 * The JSON views of a status through a private share link (docs/api.md#private-share-links):
 * no key, the token is the credential. Outside the keyed scope.
 */
export const shareLinkViewRoutes: FastifyPluginAsyncTypebox<{
  deps: ServiceDeps
  publicUrl: string | null
}> = async (app, { deps, publicUrl }) => {
  // errors too: a 404 must look the same whatever made the token fail
  app.addHook('onSend', (_request, reply, _payload, done) => {
    reply.headers(PRIVATE_LINK_VIEW_HEADERS)
    done()
  })

  app.get(
    '/v1/share-links/:token',
    {
      config: anonymous,
      schema: {
        operationId: 'getLinkedStatus',
        summary: 'The status a private share link shows (no API key)',
        description:
          'The public view of the status (as `GET /v1/share/:shareId`), whatever its accessType. Forged, revoked or expired: 404, the same for all.',
        tags,
        params: ShareLinkTokenParamsSchema,
        response: { 200: ShareViewSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => linkView(deps, request.params.token),
  )

  app.get(
    '/v1/share-links/:token/history',
    {
      config: anonymous,
      schema: {
        operationId: 'listLinkedStatusHistory',
        summary:
          'History of the status a private share link shows, when its accessTypeHistory is public',
        tags,
        params: ShareLinkTokenParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(HistoryEntrySchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit = LINK_PAGE_SIZE, cursor } = request.query
      const { token } = request.params
      const page = await linkHistory(deps, token, { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: `/v1/share-links/${token}/history`, limit })
    },
  )

  app.get(
    '/v1/share-links/:token/users',
    {
      config: anonymous,
      schema: {
        operationId: 'listLinkedStatusUsers',
        summary:
          'User list of the status a private share link shows, when its accessTypeUserList is public',
        tags,
        params: ShareLinkTokenParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(StatusUserSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit = LINK_PAGE_SIZE, cursor } = request.query
      const { token } = request.params
      const page = await linkUsers(deps, token, { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: `/v1/share-links/${token}/users`, limit })
    },
  )
}
