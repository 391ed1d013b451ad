import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { conflict } from '../../lib/errors.ts'
import { toProfileView } from '../users/accounts.service.ts'
import { addressKey } from '../users/login-throttle.ts'
import type { AccountMail } from './account-mail.service.ts'
import { EmailSchema, NewPasswordSchema, ProfileSchema } from './accounts.schemas.ts'
import { setSessionCookie } from './session-cookie.ts'

// E-mail verification, password reset and sign-in links, as JSON
// (docs/api.md#e-mail-verification-password-reset-and-sign-in-links). The pages the links
// open (web/auth-pages.routes.ts) do the same through the same service.

export interface AccountMailRouteOptions {
  mail: AccountMail
  publicUrl: string | null
}

/** A link's token as it appears after `/auth/…/`: anything else is simply not found. */
export const LinkTokenSchema = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'The token at the end of the link (`sdl_…`)',
  examples: ['sdl_3kVd0Zp8QmXn4LwR7tYb2CsE9uHa6JgF1oKi5NcMxPq'],
})

const TokenBodySchema = Type.Object(
  { token: LinkTokenSchema },
  {
    additionalProperties: false,
    examples: [{ token: 'sdl_3kVd0Zp8QmXn4LwR7tYb2CsE9uHa6JgF1oKi5NcMxPq' }],
  },
)

const ResetRequestBodySchema = Type.Object(
  { email: EmailSchema },
  { additionalProperties: false, examples: [{ email: 'ada@example.com' }] },
)

const ResetConfirmBodySchema = Type.Object(
  { token: LinkTokenSchema, password: NewPasswordSchema },
  {
    additionalProperties: false,
    examples: [
      {
        token: 'sdl_3kVd0Zp8QmXn4LwR7tYb2CsE9uHa6JgF1oKi5NcMxPq',
        password: 'a new and longer passphrase',
      },
    ],
  },
)

const AcceptedSchema = Type.Object(
  { message: Type.String() },
  {
    $id: 'ResetRequested',
    description: 'The request was taken; whether a message goes out is not told',
    examples: [
      {
        message:
          'If an account uses this address, a link to reset its password is on its way. It works for one hour.',
      },
    ],
  },
)

const VerificationSentSchema = Type.Object(
  {
    email: Type.String({ description: 'Where the link was sent' }),
    expiresAt: Type.String({ format: 'date-time', description: 'When the link stops working' }),
  },
  {
    $id: 'VerificationSent',
    description: 'A verification link is on its way',
    examples: [{ email: 'ada@example.com', expiresAt: '2026-11-29T09:30:00.000Z' }],
  },
)

const tags = ['accounts']
// anonymous (the token is the credential), counted per client address; a browser's post from
// another site is refused (no one is signed in to an account by someone else's page)
const anonymous = { auth: 'none', anonymousLimit: true, refuseCrossSite: true } as const

/** The anonymous routes: outside the API key's scope (accounts.plugin.ts). */
export const accountMailRoutes: FastifyPluginAsyncTypebox<AccountMailRouteOptions> = async (
  app,
  { mail, publicUrl },
) => {
  app.post(
    '/v1/auth/verify-email',
    {
      config: anonymous,
      schema: {
        operationId: 'verifyEmail',
        summary: 'Confirm an e-mail address with the token of the link mailed to it',
        description:
          "The address becomes the account's (for a change of address) and confirmed, and the account `verified`; this client is signed in (sets the `statusd_session` cookie). When the account's address was not proven before, every session, API key and passkey it had ends first: whoever signed up with the address keeps nothing. An unknown token: 404 `notFound`; a used or expired one: 410 `gone`; an address another account took meanwhile: 409 `conflict`.",
        tags,
        body: TokenBodySchema,
        response: { 200: ProfileSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const started = await mail.verifyEmail(request.body.token, {
        userAgent: request.headers['user-agent'],
        ip: request.ip,
      })
      setSessionCookie(reply, started.token, publicUrl)
      return toProfileView(started.user)
    },
  )

  app.post(
    '/v1/auth/password-reset',
    {
      config: anonymous,
      schema: {
        operationId: 'requestPasswordReset',
        summary: 'Ask for a password reset link by e-mail',
        description:
          'Always 202, whether or not an account has the address, and at once: the message (a link that works for one hour) is sent in the background. One address gets at most one link every 5 minutes and 5 a day; one client may ask 10 times an hour (then 429). Without SMTP: 501 `emailUnavailable` (ask the operator for `statusd user link`).',
        tags,
        body: ResetRequestBodySchema,
        response: { 202: AcceptedSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      mail.requestPasswordReset(request.body.email, addressKey(request.ip))
      return reply.code(202).send({
        message:
          'If an account uses this address, a link to reset its password is on its way. It works for one hour.',
      })
    },
  )

  app.post(
    '/v1/auth/password-reset/confirm',
    {
      config: anonymous,
      schema: {
        operationId: 'confirmPasswordReset',
        summary: 'Set a new password with the token of a reset link, and sign in',
        description:
          'Ends every session, API key and passkey of the account, then signs this client in (sets the `statusd_session` cookie). Password rules as at sign-up (400). An unknown token: 404 `notFound`; a used or expired one, or one sent to an address the account no longer has: 410 `gone`.',
        tags,
        body: ResetConfirmBodySchema,
        response: { 200: ProfileSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { token, password } = request.body
      const started = await mail.resetPassword(token, password, {
        userAgent: request.headers['user-agent'],
        ip: request.ip,
      })
      setSessionCookie(reply, started.token, publicUrl)
      return toProfileView(started.user)
    },
  )

  app.post(
    '/v1/auth/link',
    {
      config: anonymous,
      schema: {
        operationId: 'signInWithLink',
        summary: "Sign in with the token of an operator's one-time sign-in link",
        description:
          'Sets the `statusd_session` cookie (a session of method `link`). An unknown token: 404 `notFound`; a used or expired one: 410 `gone`.',
        tags,
        body: TokenBodySchema,
        response: { 200: ProfileSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const started = await mail.signInWithLink(request.body.token, {
        userAgent: request.headers['user-agent'],
        ip: request.ip,
      })
      setSessionCookie(reply, started.token, publicUrl)
      return toProfileView(started.user)
    },
  )
}

/** The signed-in routes: in the API key's scope (accounts.plugin.ts). */
export const emailVerificationRoutes: FastifyPluginAsyncTypebox<{ mail: AccountMail }> = async (
  app,
  { mail },
) => {
  app.post(
    '/v1/user/email/verification',
    {
      config: { auth: 'authenticated', scope: 'account' },
      schema: {
        operationId: 'resendEmailVerification',
        summary: 'Mail a new verification link for your e-mail address',
        description:
          'For an address not confirmed yet (a confirmed one, or none: 409 `conflict`). Links sent before stop working. At most 5 an hour (then 429). Without SMTP: 501 `emailUnavailable`.',
        tags,
        response: { 202: VerificationSentSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const user = await mail.userOf(request.caller.userId)
      if (user.email === null) throw conflict('Your account has no e-mail address to verify')
      if (user.email_verified_at !== null)
        throw conflict('Your e-mail address is confirmed already')
      const sent = await mail.sendVerification(user, user.email)
      return reply.code(202).send({ email: user.email, expiresAt: sent.expiresAt })
    },
  )
}
