import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Clock } from '../../lib/clock.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { ApiError, forbidden } from '../../lib/errors.ts'
import { requesterOf } from '../audit/security-events.ts'
import {
  type AccountDeps,
  changeProfile,
  confirmPassword,
  profileOf,
} from '../users/accounts.service.ts'
import { signInWithPasskey } from '../users/passkeys.service.ts'
import { PASSWORD_LENGTHS } from '../users/passwords.ts'
import {
  endSession,
  endSessionsOf,
  type SessionDeps,
  sessionsOf,
} from '../users/sessions.service.ts'
import { type AccountDeletionDeps, deleteAccount } from './account-deletion.service.ts'
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
import { AuthenticationResponseSchema } from './passkeys.schemas.ts'
import { relyingPartyResolver } from './relying-party.ts'
import { clearSessionCookie } from './session-cookie.ts'

/** What the profile and session routes need. */
export interface ProfileRouteOptions {
  accounts: AccountDeps
  sessions: SessionDeps
  /** E-mail: with SMTP, a new address is confirmed by a link before it is stored. */
  mail: AccountMail
  /** Deleting the account: its statuses, announced gone through the statuses' services. */
  deletion: AccountDeletionDeps
  clock: Clock
  publicUrl: string | null
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

const DeleteAccountBodySchema = Type.Object(
  {
    password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: PASSWORD_LENGTHS.maxLength,
        description: 'Your password',
      }),
    ),
    passkey: Type.Optional(
      Type.Object(
        {
          challengeId: Type.String({ minLength: 1, maxLength: 64 }),
          response: AuthenticationResponseSchema,
        },
        {
          additionalProperties: false,
          description:
            'Instead of the password: a fresh passkey assertion, the answer of `navigator.credentials.get()` to a challenge from `POST /v1/auth/passkey/options`',
        },
      ),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    maxProperties: 1,
    examples: [{ password: 'analytical engine notes' }],
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
  { accounts, sessions, mail, deletion, clock, publicUrl },
) => {
  const relyingParty = relyingPartyResolver(publicUrl)
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
      await mail.sendVerification({ id: profile.id, name: profile.name }, pendingEmail)
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

  app.delete(
    '/v1/user',
    {
      config,
      schema: {
        operationId: 'deleteAccount',
        summary: 'Delete your account and everything it owns',
        description:
          'Confirmed by your `password`, or by a fresh `passkey` assertion (a challenge from `POST /v1/auth/passkey/options`, answered by one of your passkeys); wrong: 403 `forbidden`. A signed-in session only: an API key gets 403 `forbidden`. Your statuses (with their history, share links and schedules; boards drop them), roles, keys, sessions, passkeys, boards, channels and rules go; streams on your statuses hear they are deleted, and every stream opened with your keys or sessions ends, on every instance. Your address is free at once. With SMTP set, a goodbye mail goes to it. The last enabled operator cannot delete themself (409 `conflict`). See docs/accounts.md#delete-your-account.',
        tags,
        body: DeleteAccountBodySchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { caller, body } = request
      if (caller.credential.kind !== 'session')
        throw forbidden('Deleting an account needs a signed-in session, not an API key')
      const requester = requesterOf(request)
      if (body.passkey !== undefined) {
        let confirmedBy: string
        try {
          ;({ userId: confirmedBy } = await signInWithPasskey(
            accounts.db,
            relyingParty(request),
            clock,
            body.passkey,
            { ip: requester.ip, userAgent: requester.userAgent },
          ))
        } catch (err) {
          // the caller is signed in: a refused passkey is 403, as a wrong password is
          if (err instanceof ApiError && err.statusCode === 401) throw passkeyNotConfirmed()
          throw err
        }
        if (confirmedBy !== caller.userId) throw passkeyNotConfirmed()
      } else {
        await confirmPassword(accounts, caller.userId, body.password ?? '', {
          field: 'password',
          ip: request.ip,
          userAgent: requester.userAgent,
          reason: 'wrongPasswordToDelete',
        })
      }
      const { user } = await deleteAccount(deletion, caller.userId, {
        kind: 'accountDeleted',
        actorId: caller.userId,
        ip: requester.ip,
        userAgent: requester.userAgent,
      })
      mail.sendGoodbye(user)
      clearSessionCookie(reply, publicUrl)
      return reply.code(204).send(null)
    },
  )
}

const passkeyNotConfirmed = () =>
  forbidden('That passkey does not confirm your account', [
    { field: 'passkey', message: 'is not a valid answer from one of your passkeys' },
  ])
