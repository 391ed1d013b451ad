import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Kysely } from 'kysely'
import { type Static, Type } from 'typebox'
import type { DB } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { notFound } from '../../lib/errors.ts'
import { API_RESPONSE_HEADERS } from '../../lib/response-headers.ts'
import { toProfileView } from '../users/accounts.service.ts'
import type { PasswordHasher } from '../users/passwords.ts'
import { startSession } from '../users/sessions.service.ts'
import { checkSetupLink, completeSetup, setupPasskeyOptions } from '../users/setup.service.ts'
import { userById } from '../users/users.service.ts'
import { EmailSchema, NameSchema, NewPasswordSchema, ProfileSchema } from './accounts.schemas.ts'
import { RegistrationOptionsSchema, RegistrationResponseSchema } from './passkeys.schemas.ts'
import { relyingPartyResolver } from './relying-party.ts'
import { setSessionCookie } from './session-cookie.ts'

// First run in the browser (docs/api.md#first-run-setup): the setup link the first start
// prints opens the app's setup screen, which asks these routes whether the link still works,
// for passkey options, and to complete the setup. The link's token is the credential.

export interface SetupRouteOptions {
  db: Kysely<DB>
  clock: Clock
  publicUrl: string | null
  hasher?: PasswordHasher
  /** The person's account changed: cached copies of it go (name, address). */
  userChanged(userId: string): void
}

const TokenParams = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 100, description: 'The end of the setup link' }),
})

const SetupPasskeyOptionsBody = Type.Object(
  { name: NameSchema, email: EmailSchema },
  {
    additionalProperties: false,
    examples: [{ name: 'Ada Lovelace', email: 'ada@example.com' }],
  },
)

const SetupBody = Type.Object(
  {
    name: NameSchema,
    email: EmailSchema,
    password: Type.Optional(NewPasswordSchema),
    passkey: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          response: RegistrationResponseSchema,
        },
        {
          additionalProperties: false,
          description:
            'Instead of a password: the answer of `navigator.credentials.create()` to the options of `POST /v1/auth/setup/{token}/passkey-options`',
        },
      ),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { name: 'Ada Lovelace', email: 'ada@example.com', password: 'analytical engine notes' },
    ],
  },
)

const tags = ['accounts']
// anyone holding the link may call them; each counts against the address's anonymous limit,
// and a browser's request from another site is refused (no one is set up by another page)
const config = { auth: 'none', anonymousLimit: true, refuseCrossSite: true } as const

export const setupRoutes: FastifyPluginAsyncTypebox<SetupRouteOptions> = async (app, options) => {
  const { db, clock, publicUrl } = options
  const deps = { db, clock, ...(options.hasher && { hasher: options.hasher }) }
  const relyingParty = relyingPartyResolver(publicUrl)
  // a session cookie, a challenge: never kept by a cache, never framed or sniffed
  app.addHook('onSend', (_request, reply, _payload, done) => {
    reply.headers(API_RESPONSE_HEADERS)
    done()
  })

  app.get(
    '/v1/auth/setup/:token',
    {
      config: { auth: 'none', anonymousLimit: true },
      schema: {
        operationId: 'checkSetupLink',
        summary: 'Whether the first start’s setup link can still be used',
        description:
          '204 when it can. Never made: 404; used or expired: 410 `gone` (docs/app.md#the-first-start says what to do then).',
        tags,
        params: TokenParams,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await checkSetupLink(deps, request.params.token)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/v1/auth/setup/:token/passkey-options',
    {
      config,
      schema: {
        operationId: 'setupPasskeyOptions',
        summary: 'Start setting up with a passkey: options for navigator.credentials.create()',
        description:
          'A new one-time challenge for the first user, open for 5 minutes; the authenticator shows the name and address sent. The link is not used. Passkeys need PUBLIC_URL with a domain name, or `localhost`: otherwise 409.',
        tags,
        params: TokenParams,
        body: SetupPasskeyOptionsBody,
        response: { 200: RegistrationOptionsSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) =>
      // note: the library's type leaves optional what it always fills in
      (await setupPasskeyOptions(
        deps,
        relyingParty(request),
        request.params.token,
        request.body,
      )) as Static<typeof RegistrationOptionsSchema>,
  )

  app.post(
    '/v1/auth/setup/:token',
    {
      config,
      schema: {
        operationId: 'completeSetup',
        summary: 'Set up the first account from the setup link, and sign in',
        description:
          'Gives the first user (the operator) the name, the e-mail address (confirmed: the link vouches for it) and either `password` or `passkey`, uses the link, and sets the `statusd_session` cookie, as signing in does. All or nothing: a refused password (400), an address another account holds (409 `conflict`) or a passkey answer that does not verify (400) changes nothing and leaves the link usable. Never made: 404; used or expired: 410 `gone`.',
        tags,
        params: TokenParams,
        body: SetupBody,
        response: { 200: ProfileSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { userId } = await completeSetup(
        deps,
        () => relyingParty(request),
        request.params.token,
        request.body,
        { ip: request.ip, userAgent: request.headers['user-agent'] },
      )
      options.userChanged(userId)
      const { token } = await startSession(db, {
        userId,
        method: 'setup',
        userAgent: request.headers['user-agent'],
        ip: request.ip,
        clock,
      })
      setSessionCookie(reply, token, publicUrl)
      const user = await userById(db, userId)
      if (!user) throw notFound('User not found')
      return toProfileView(user)
    },
  )
}
