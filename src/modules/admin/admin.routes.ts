import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { type Mailer, sendInBackground } from '../../lib/mailer.ts'
import { userById } from '../users/users.service.ts'
import {
  AdminInvitationBodySchema,
  AdminInvitationSchema,
  AdminSignInLinkSchema,
  AdminUserChangesSchema,
  AdminUserListQuerySchema,
  AdminUserParamsSchema,
  AdminUserSchema,
  InstanceSchema,
} from './admin.schemas.ts'
import {
  type Actor,
  type AdminDeps,
  changeUser,
  deleteUser,
  getUser,
  type InstanceFacts,
  instanceInfo,
  invitationMessage,
  inviteUser,
  listUsers,
  makeSignInLink,
  USER_PAGE,
} from './admin.service.ts'

export interface AdminRouteOptions {
  deps: AdminDeps
  publicUrl: string | null
  /** Where links point: PUBLIC_URL, or the address the server listens on. */
  linkBase: () => string
  /** Mails invitations; null: no SMTP, the operator hands the link over. */
  mailer: Mailer | null
  instance: InstanceFacts
}

const tags = ['operators']
// only an operator, and with a key only one holding the scope `admin`
// (docs/operations.md#operators)
const operator = { admin: true, scope: 'admin' } as const

const actorOf = (request: FastifyRequest): Actor => ({
  userId: request.caller.userId,
  ip: request.ip,
  userAgent: request.headers['user-agent'],
})

/** The next page of the users, with the search kept. */
const nextPage = (
  publicUrl: string | null,
  q: string | undefined,
  limit: number,
  cursor: string,
) => {
  const query = new URLSearchParams({
    ...(q !== undefined && { q }),
    limit: String(limit),
    cursor,
  })
  return `<${publicUrl ?? ''}/v1/admin/users?${query}>; rel="next"`
}

/**
 * The operators' API (docs/operations.md#operators): the users, invitations, the instance.
 * Every route answers operators alone (403 `forbidden` to anyone else); a key needs the
 * scope `admin`. What an operator changes is recorded in the security log.
 */
export const adminRoutes: FastifyPluginAsyncTypebox<AdminRouteOptions> = async (
  app,
  { deps, publicUrl, linkBase, mailer, instance },
) => {
  app.get(
    '/v1/admin/users',
    {
      config: operator,
      schema: {
        operationId: 'adminListUsers',
        summary: 'List the users, oldest first (operators)',
        description: `A page of at most \`limit\` users (default ${USER_PAGE.default}); a \`Link: <…>; rel="next"\` header names the next page, keeping \`q\`. With \`q\`, only users whose name or e-mail address holds it. \`lastSignInAt\` is when the user's latest session began.`,
        tags,
        querystring: AdminUserListQuerySchema,
        response: { 200: Type.Array(AdminUserSchema), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { q, limit, cursor } = request.query
      const page = await listUsers(deps, { q, limit, cursor })
      if (page.nextCursor !== null)
        reply.header('link', nextPage(publicUrl, q, limit ?? USER_PAGE.default, page.nextCursor))
      return page.items
    },
  )

  app.get(
    '/v1/admin/users/:userId',
    {
      config: operator,
      schema: {
        operationId: 'adminGetUser',
        summary: 'Read one user (operators)',
        tags,
        params: AdminUserParamsSchema,
        response: { 200: AdminUserSchema, ...ERROR_RESPONSES },
      },
    },
    (request) => getUser(deps, request.params.userId),
  )

  app.patch(
    '/v1/admin/users/:userId',
    {
      config: operator,
      schema: {
        operationId: 'adminChangeUser',
        summary: "Change a user's plan, verification, operator flag or disabled state (operators)",
        description:
          'Disabling a user ends their sessions and every event stream opened with their keys or sessions, on every instance; they sign in by no method (403 `forbidden`) and their keys answer 401 until they are enabled again. Taking `admin` away takes the scope `admin` from their keys (a key that held nothing else is revoked). Demoting or disabling the last enabled operator, yourself included, is 409 `conflict`. Each change is recorded in the security log.',
        tags,
        params: AdminUserParamsSchema,
        body: AdminUserChangesSchema,
        response: { 200: AdminUserSchema, ...ERROR_RESPONSES },
      },
    },
    (request) => changeUser(deps, actorOf(request), request.params.userId, request.body),
  )

  app.delete(
    '/v1/admin/users/:userId',
    {
      config: operator,
      schema: {
        operationId: 'adminDeleteUser',
        summary: 'Delete a user and everything theirs (operators)',
        description:
          'Their statuses (streams on them hear they are deleted; their history goes after, in batches), keys, sessions, passkeys, roles, boards and channels. The security log keeps the record of the deletion. The last enabled operator cannot be deleted (409 `conflict`).',
        tags,
        params: AdminUserParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await deleteUser(deps, actorOf(request), request.params.userId)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/v1/admin/users/:userId/sign-in-link',
    {
      config: operator,
      schema: {
        operationId: 'adminCreateSignInLink',
        summary: 'Make a one-time sign-in link for a user, to hand over (operators)',
        description:
          'As `statusd user link`: the link works once, for an hour. It is in this answer only; nothing is mailed. A disabled user cannot sign in with it.',
        tags,
        params: AdminUserParamsSchema,
        response: { 201: AdminSignInLinkSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const link = await makeSignInLink(deps, actorOf(request), request.params.userId, linkBase())
      return reply.code(201).send(link)
    },
  )

  app.post(
    '/v1/admin/invitations',
    {
      config: { ...operator, located: true },
      schema: {
        operationId: 'adminInviteUser',
        summary: 'Invite someone by e-mail address: their account, and a sign-in link (operators)',
        description:
          "The account is made at once (verified, on `plan` or the sign-up plan, the address vouched for, no password; `name` defaults to the address's part before the @), with a one-time sign-in link that works for 7 days. With SMTP set the link is mailed to the address (`mailed: true`, `url` null); without, it is in `url`, for you to hand over. Once in, the person sets a password or adds a passkey. An address an account has: 409 `conflict`.",
        tags,
        body: AdminInvitationBodySchema,
        response: { 201: AdminInvitationSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const mail = mailer !== null
      const { invitation, url } = await inviteUser(deps, actorOf(request), request.body, {
        mail,
        linkBase: linkBase(),
      })
      if (mailer !== null && invitation.user.email !== null)
        void sendInBackground(
          mailer,
          invitationMessage({
            to: invitation.user.email,
            url,
            inviterName: request.caller.name,
            serviceUrl: linkBase(),
            // the new account has no language yet: the operator's (docs/languages.md)
            locale: (await userById(deps.db, request.caller.userId))?.locale ?? null,
          }),
          request.log,
          'invitation by an operator',
        )
      return reply
        .code(201)
        .header('location', `/v1/admin/users/${invitation.user.id}`)
        .send(invitation)
    },
  )

  app.get(
    '/v1/admin/instance',
    {
      config: operator,
      schema: {
        operationId: 'adminGetInstance',
        summary: 'The state of this instance: version, storage, configuration, load (operators)',
        description:
          "`openStreams` and `uptimeSeconds` are those of the instance that answers; the rest is the service's. `outboxBacklog`: events recorded for the notification channels and not fanned out yet, which should stay near 0.",
        tags,
        response: { 200: InstanceSchema, ...ERROR_RESPONSES },
      },
    },
    () => instanceInfo(deps, instance),
  )
}
