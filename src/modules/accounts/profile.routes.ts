import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { requesterOf } from '../audit/security-events.ts'
import { type AccountDeps, changeProfile, profileOf } from '../users/accounts.service.ts'
import { PASSWORD_LENGTHS } from '../users/passwords.ts'
import {
  endSession,
  endSessionsOf,
  type SessionDeps,
  sessionsOf,
} from '../users/sessions.service.ts'
import type { AccountMail } from './account-mail.service.ts'
import {
  ChangedProfileSchema,
  EmailSchema,
  LocaleSchema,
  NameSchema,
  NewPasswordSchema,
  ProfileSchema,
  SessionSchema,
} from './accounts.schemas.ts'

/** What the profile and session routes need. */
export interface ProfileRouteOptions {
  accounts: AccountDeps
  sessions: SessionDeps
  /** E-mail: with SMTP, a new address is confirmed by a link before it is stored. */
  mail: AccountMail
}

const ChangeProfileBodySchema = Type.Object(
  {
    name: Type.Optional(NameSchema),
    email: Type.Optional(EmailSchema),
    password: Type.Optional(NewPasswordSchema),
    currentPassword: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: PASSWORD_LENGTHS.maxLength,
        description: 'Your current password: needed to set a new one',
      }),
    ),
    locale: Type.Optional(LocaleSchema),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [
      { name: 'Ada King' },
      { locale: 'de' },
      { password: 'a new and longer passphrase', currentPassword: 'analytical engine notes' },
    ],
  },
)

const SessionIdParamsSchema = Type.Object({ sessionId: Type.String() })

const tags = ['accounts']
// your own account: a user whose e-mail is not verified yet may see and change it too
const config = { auth: 'authenticated', scope: 'account' } as const

/**
 * The caller's profile and sessions (docs/api.md#sign-up-sign-in-and-sessions), with a key
 * (scope `account`) or the session cookie.
 */
export const profileRoutes: FastifyPluginAsyncTypebox<ProfileRouteOptions> = async (
  app,
  { accounts, sessions, mail },
) => {
  const sessionOf = (credential: { kind: string; id: string }) =>
    credential.kind === 'session' ? credential.id : null

  app.get(
    '/v1/user',
    {
      config,
      schema: {
        operationId: 'getProfile',
        summary: 'Your profile',
        tags,
        response: { 200: ProfileSchema, ...ERROR_RESPONSES },
      },
    },
    (request) => profileOf(accounts.db, request.caller.userId),
  )

  app.patch(
    '/v1/user',
    {
      config,
      schema: {
        operationId: 'changeProfile',
        summary: 'Change your name, e-mail address, password or language',
        description:
          'A new password needs `currentPassword` (wrong: 403 `forbidden`) and ends your other sessions. A taken e-mail address: 409 `conflict`. `locale` is the language of the mails and notifications you get (null: English).',
        tags,
        body: ChangeProfileBodySchema,
        response: { 200: ChangedProfileSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const { caller, body } = request
      // with SMTP a new address is confirmed first (docs/accounts.md#e-mail): a link goes to
      // it, and it becomes yours when followed; without SMTP the change takes effect at once.
      // note: the mail limit is checked before anything changes (a failed request changes nothing)
      if (mail.enabled && body.email !== undefined)
        await mail.assertCanSendVerification(caller.userId)
      const { profile, pendingEmail } = await changeProfile(
        accounts,
        {
          userId: caller.userId,
          currentSessionId: sessionOf(caller.credential),
          ip: request.ip,
          requester: requesterOf(request),
        },
        body,
        { deferEmail: mail.enabled },
      )
      if (pendingEmail === undefined) return profile
      await mail.sendVerification(
        { id: profile.id, name: profile.name, locale: profile.locale },
        pendingEmail,
      )
      return { ...profile, pendingEmail }
    },
  )

  app.get(
    '/v1/user/sessions',
    {
      config,
      schema: {
        operationId: 'listSessions',
        summary: 'Your sessions (signed-in browsers), the most recently used first',
        tags,
        response: { 200: Type.Array(SessionSchema), ...ERROR_RESPONSES },
      },
    },
    (request) => sessionsOf(sessions, request.caller.userId, sessionOf(request.caller.credential)),
  )

  app.delete(
    '/v1/user/sessions/:sessionId',
    {
      config,
      schema: {
        operationId: 'revokeSession',
        summary: 'End one of your sessions (that browser is signed out at once)',
        tags,
        params: SessionIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await endSession(sessions, request.caller.userId, request.params.sessionId, {
        kind: 'sessionRevoked',
        by: requesterOf(request),
      })
      return reply.code(204).send(null)
    },
  )

  app.delete(
    '/v1/user/sessions',
    {
      config,
      schema: {
        operationId: 'revokeOtherSessions',
        summary: 'End all your sessions but the one making this request',
        description: 'With an API key, every session ends.',
        tags,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await endSessionsOf(
        sessions,
        request.caller.userId,
        sessionOf(request.caller.credential),
        requesterOf(request),
      )
      return reply.code(204).send(null)
    },
  )
}
