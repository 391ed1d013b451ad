import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { systemClock } from '../../lib/clock.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { hashApiKey } from '../../lib/ids.ts'
import { requesterOf } from '../audit/security-events.ts'
import { type AccountDeps, signIn, toProfileView } from '../users/accounts.service.ts'
import {
  authenticateSession,
  endSession,
  SESSION_COOKIE,
  type SessionDeps,
  startSession,
} from '../users/sessions.service.ts'
import type { AccountMail } from './account-mail.service.ts'
import {
  AuthSettingsSchema,
  EmailSchema,
  NameSchema,
  NewPasswordSchema,
  PasswordSchema,
  ProfileSchema,
} from './accounts.schemas.ts'
import { clearSessionCookie, setSessionCookie } from './session-cookie.ts'
import { signUpWith } from './signup.service.ts'

/** What the sign-up, sign-in and sign-out routes need. */
export interface AuthRouteOptions {
  accounts: AccountDeps
  sessions: SessionDeps
  /** Who may sign up (SIGNUP): `open`, or `invite` (an invitation, or the CLI). */
  signup: 'invite' | 'open'
  publicUrl: string | null
  /**
   * E-mail: with SMTP an account starts `authenticated` and a verification link goes to its
   * address; without, it starts `verified` (docs/accounts.md#e-mail).
   */
  mail: AccountMail
}

const SignUpBodySchema = Type.Object(
  {
    email: EmailSchema,
    name: NameSchema,
    password: NewPasswordSchema,
    invitation: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'The token of an invitation link (`sdi_…`, the end of its URL): the account is verified at once and gets its role (docs/accounts.md#invitation-links)',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { email: 'ada@example.com', name: 'Ada Lovelace', password: 'analytical engine notes' },
    ],
  },
)

const SignInBodySchema = Type.Object(
  { email: EmailSchema, password: PasswordSchema },
  {
    additionalProperties: false,
    examples: [{ email: 'ada@example.com', password: 'analytical engine notes' }],
  },
)

const tags = ['accounts']
// anyone may call them; each counts against the address's anonymous limit, and a browser's
// request from another site is refused (login CSRF: no one is signed in to an attacker's account)
const config = { auth: 'none', anonymousLimit: true, refuseCrossSite: true } as const

/**
 * Signing up, in and out (docs/api.md#sign-up-sign-in-and-sessions): outside the API key's
 * scope; a session begins with a cookie.
 */
export const authRoutes: FastifyPluginAsyncTypebox<AuthRouteOptions> = async (app, options) => {
  const { accounts, sessions, publicUrl } = options
  const clock = sessions.clock

  app.get(
    '/v1/auth/settings',
    {
      config: { auth: 'none', anonymousLimit: true },
      schema: {
        operationId: 'getAuthSettings',
        summary: 'How people join this service: who may sign up, whether it sends mail',
        description:
          'For a sign-up page to say "by invitation" before anyone types, and an account page to mention a mailed link only when mail is sent.',
        tags,
        response: { 200: AuthSettingsSchema, ...ERROR_RESPONSES },
      },
    },
    async () => ({ signup: options.signup, email: options.mail.enabled }),
  )

  app.post(
    '/v1/auth/signup',
    {
      config,
      schema: {
        operationId: 'signUp',
        summary: 'Create an account with a password, and sign in',
        description:
          'Sets the `statusd_session` cookie, as signing in does. Without `invitation`, only when SIGNUP=open: 403 `forbidden`. With the token of an invitation link, on either setting: the account starts verified and gets the role, or is not made at all (a forged token 404, expired, used up or revoked 410 `gone`, a link bound to another address 403). A taken e-mail address: 409 `conflict`.',
        tags,
        body: SignUpBodySchema,
        response: { 201: ProfileSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      // with SMTP the address is verified by a link first (docs/accounts.md#e-mail), unless
      // an invitation vouches for the person (docs/accounts.md#invitation-links)
      const user = await signUpWith(
        accounts,
        { signup: options.signup, emailVerification: options.mail.enabled },
        request.body,
        (clock ?? systemClock).now(),
      )
      if (options.mail.enabled && user.email !== null && Number(user.verified) !== 1)
        await options.mail.sendVerification(user, user.email)
      const { token } = await startSession(accounts.db, {
        userId: user.id,
        method: 'signup',
        userAgent: request.headers['user-agent'],
        ip: request.ip,
        ...(clock && { clock }),
      })
      setSessionCookie(reply, token, publicUrl)
      return reply.code(201).send(toProfileView(user))
    },
  )

  app.post(
    '/v1/auth/login',
    {
      config,
      schema: {
        operationId: 'signIn',
        summary: 'Sign in with e-mail and password: a new session',
        description:
          'Sets the `statusd_session` cookie (HttpOnly, SameSite=Lax, Path=/, Secure over https, Max-Age 90 days). A wrong e-mail or password: 401 `invalidCredentials`, the same for both. Attempts are counted before the password is judged: past 5 for an account in 15 minutes (a correct password clears them), or 30 failures from one address, 429 `rateLimited` with Retry-After. While the server checks as many passwords as it can at once, queue included: 429 `tooManyRequests` with Retry-After.',
        tags,
        body: SignInBodySchema,
        response: { 200: ProfileSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const user = await signIn(accounts, {
        ...request.body,
        ip: request.ip,
        userAgent: request.headers['user-agent'],
      })
      // note: a new token every time, whatever cookie came with the request (session fixation)
      const { token } = await startSession(accounts.db, {
        userId: user.id,
        method: 'password',
        userAgent: request.headers['user-agent'],
        ip: request.ip,
        ...(clock && { clock }),
      })
      setSessionCookie(reply, token, publicUrl)
      return toProfileView(user)
    },
  )

  app.post(
    '/v1/auth/logout',
    {
      config: { auth: 'none', anonymousLimit: true, refuseCrossSite: true },
      schema: {
        operationId: 'signOut',
        summary: 'Sign out: the session ends and its cookie is cleared',
        description: 'Answers 204 whether or not a session was open.',
        tags,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const token = request.cookies[SESSION_COOKIE]
      if (token !== undefined && token.length > 0 && token.length <= 256) {
        const found = await authenticateSession(sessions.db, hashApiKey(token), clock)
        if (found)
          await endSession(sessions, found.user.id, found.session.id, {
            kind: 'signOut',
            by: { ...requesterOf(request), actorId: found.user.id },
          })
      }
      clearSessionCookie(reply, publicUrl)
      return reply.code(204).send(null)
    },
  )
}
