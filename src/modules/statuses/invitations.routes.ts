import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Clock } from '../../lib/clock.ts'
import { pageItems } from '../../lib/cursor.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { type Mailer, sendInBackground } from '../../lib/mailer.ts'
import { API_RESPONSE_HEADERS } from '../../lib/response-headers.ts'
import { requesterOf } from '../audit/security-events.ts'
import type { ServiceDeps } from '../service-deps.ts'
import {
  CreatedInvitationLinkSchema,
  CreateInvitationLinkSchema,
  InvitationIdParamsSchema,
  InvitationLinkPreviewSchema,
  InvitationLinkSchema,
  InvitationTokenParamsSchema,
  RoleInvitationSchema,
  StatusInvitationParamsSchema,
} from './invitations.schemas.ts'
import {
  acceptInvitation,
  acceptLink,
  createInvitationLink,
  declineInvitation,
  invitationMail,
  listLinks,
  listMyInvitations,
  listPendingInvitations,
  previewLink,
  revokeLink,
} from './invitations.service.ts'
import { SubscriptionSchema } from './sharing.schemas.ts'
import { ListQuerySchema, StatusIdParamsSchema } from './statuses.schemas.ts'
import { TransferredStatusSchema } from './transfer.schemas.ts'

const tags = ['invitations']
const PAGING =
  'Without `limit`, every entry. With `limit`, one page; a `Link: <…>; rel="next"` header names the next.'
// roles and invitations, on either side, are `status:manage` (docs/accounts.md#scoped-keys);
// an unverified user may see and answer the invitations made to them
const invitee = { auth: 'authenticated', scope: 'status:manage' } as const
const owner = { scope: 'status:manage' } as const

export interface InvitationRouteOptions {
  deps: ServiceDeps
  publicUrl: string | null
  /** Where links point: PUBLIC_URL, or the address the server listens on. */
  linkBase: () => string
  /** Where link expiry reads the time (tests move it by hand). */
  clock: Clock
  /** Mails a link made for an e-mail address; null: no SMTP, the owner hands the link over. */
  mailer?: Mailer | null
}

/**
 * Invitations with consent and invitation links (docs/accounts.md#invitations): the invitee's
 * side (their pending invitations, accepting a link) and the owner's (pending invitations,
 * links). In the API-key scope.
 */
export const invitationRoutes: FastifyPluginAsyncTypebox<InvitationRouteOptions> = async (
  app,
  { deps, publicUrl, linkBase, clock, mailer = null },
) => {
  app.get(
    '/v1/user/invitations',
    {
      config: invitee,
      schema: {
        operationId: 'listMyInvitations',
        summary: 'Invitations to a role waiting for your answer, oldest first',
        description: PAGING,
        tags,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(RoleInvitationSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query
      const page = await listMyInvitations(deps, request.caller, { limit, cursor })
      return pageItems(reply, page, { publicUrl, path: '/v1/user/invitations', limit })
    },
  )

  app.post(
    '/v1/user/invitations/:id/accept',
    {
      config: invitee,
      schema: {
        operationId: 'acceptInvitation',
        summary: 'Accept an invitation: you get the role offered',
        description:
          'A higher role you hold already stays. Someone else’s invitation, or one withdrawn, answered or replaced: 404. An invitation for the role `owner` is a transfer (docs/sharing.md#transfer): you own the status, its owner becomes an updater, and the answer is a `TransferredStatus` (`keyKept` false: you had a status by its key, so its key is now null); 402 when your plan allows no more statuses.',
        tags,
        params: InvitationIdParamsSchema,
        response: {
          200: Type.Union([SubscriptionSchema, TransferredStatusSchema]),
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request) =>
      acceptInvitation(deps, request.caller, request.params.id, requesterOf(request)),
  )

  app.post(
    '/v1/user/invitations/:id/decline',
    {
      config: invitee,
      schema: {
        operationId: 'declineInvitation',
        summary: 'Decline an invitation: it goes, and no role is given',
        tags,
        params: InvitationIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await declineInvitation(deps, request.caller, request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/v1/status/:statusId/invitations/pending',
    {
      config: owner,
      schema: {
        operationId: 'listPendingInvitations',
        summary: 'Invitations to a role on the status not answered yet (owner only)',
        description: PAGING,
        tags,
        params: StatusIdParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(RoleInvitationSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query
      const { statusId } = request.params
      const page = await listPendingInvitations(deps, request.caller, statusId, { limit, cursor })
      const path = `/v1/status/${statusId}/invitations/pending`
      return pageItems(reply, page, { publicUrl, path, limit })
    },
  )

  app.post(
    '/v1/status/:statusId/invitations',
    {
      config: { ...owner, provenEmail: true },
      schema: {
        operationId: 'createInvitationLink',
        summary: 'Make an invitation link (owner only): its URL is shown this once',
        description:
          'Whoever opens the link and accepts it while signed in (or signs up with it) gets the role. With `email` (only when the server sends mail; else 400), the link is mailed to that address and only an account whose confirmed address it is may accept it; at most 5 such mails an hour go to one address and 20 an hour from one inviter (then 429 `rateLimited` with Retry-After, and no link is made).',
        tags,
        params: StatusIdParamsSchema,
        body: CreateInvitationLinkSchema,
        response: { 201: CreatedInvitationLinkSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { link, token, statusName, inviterEmail, mailLocale } = await createInvitationLink(
        deps,
        request.caller,
        request.params.statusId,
        request.body,
        clock.now(),
        { mail: mailer !== null },
      )
      const url = `${linkBase()}/invite/${token}`
      // note: the address as the owner typed it; sent after the link is stored, without
      // waiting: a slow or failing SMTP server neither holds nor fails the request (the
      // owner has the URL in the answer either way)
      const to = request.body.email
      const mailed = to !== undefined && mailer !== null
      if (mailed)
        void sendInBackground(
          mailer,
          invitationMail({
            to,
            url,
            statusName,
            inviterName: request.caller.name,
            inviterEmail,
            link,
            locale: mailLocale,
          }),
          request.log,
          'invitation link',
        )
      return reply.code(201).send({ ...link, url, mailed })
    },
  )

  app.get(
    '/v1/status/:statusId/invitations',
    {
      config: owner,
      schema: {
        operationId: 'listInvitationLinks',
        summary: 'The invitation links of the status, oldest first (owner only; never their URL)',
        description: PAGING,
        tags,
        params: StatusIdParamsSchema,
        querystring: ListQuerySchema,
        response: { 200: Type.Array(InvitationLinkSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query
      const { statusId } = request.params
      const page = await listLinks(deps, request.caller, statusId, { limit, cursor }, clock.now())
      return pageItems(reply, page, {
        publicUrl,
        path: `/v1/status/${statusId}/invitations`,
        limit,
      })
    },
  )

  app.delete(
    '/v1/status/:statusId/invitations/:id',
    {
      config: owner,
      schema: {
        operationId: 'revokeInvitationLink',
        summary: 'Revoke an invitation link (owner only): it answers 410 from then on',
        description: 'Roles given through it stay.',
        tags,
        params: StatusInvitationParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { statusId, id } = request.params
      await revokeLink(deps, request.caller, statusId, id, clock.now())
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/v1/invitations/:token/accept',
    {
      config: invitee,
      schema: {
        operationId: 'acceptInvitationLink',
        summary: 'Accept an invitation link: you get its role at once, and it has one use less',
        description:
          'A role you hold already (or a higher one) spends no use and answers 200, so accepting twice is harmless. A forged token: 404; expired, used up or revoked: 410 `gone`; bound to another e-mail address: 403; your own status: 409.',
        tags,
        params: InvitationTokenParamsSchema,
        response: { 200: SubscriptionSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) =>
      acceptLink(deps, request.caller, request.params.token, clock.now(), requesterOf(request)),
  )
}

/**
 * `GET /v1/invitations/:token`: what a link offers, for anyone holding it (the accept page),
 * outside the API-key scope. Counted against the anonymous limit, never cached: its URL
 * carries a secret.
 */
export const invitationPreviewRoutes: FastifyPluginAsyncTypebox<InvitationRouteOptions> = async (
  app,
  { deps, clock },
) => {
  app.addHook('onSend', (_request, reply, _payload, done) => {
    reply.headers(API_RESPONSE_HEADERS)
    done()
  })
  app.get(
    '/v1/invitations/:token',
    {
      config: { auth: 'none', anonymousLimit: true },
      schema: {
        operationId: 'getInvitationLink',
        summary: 'What an invitation link offers (no API key): the status, the inviter, the role',
        description: 'A forged token: 404; expired, used up or revoked: 410 `gone`.',
        tags,
        params: InvitationTokenParamsSchema,
        response: { 200: InvitationLinkPreviewSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => previewLink(deps, request.params.token, clock.now()),
  )
}
