import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Kysely } from 'kysely'
import { type Static, Type } from 'typebox'
import type { DB } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { API_RESPONSE_HEADERS } from '../../lib/response-headers.ts'
import { SingleLineText } from '../../lib/text.ts'
import { requesterOf } from '../audit/security-events.ts'
import { profileOf } from '../users/accounts.service.ts'
import {
  deletePasskey,
  PASSKEY_NAME_LENGTHS,
  passkeyAuthenticationOptions,
  passkeyRegistrationOptions,
  passkeysOf,
  registerPasskey,
  renamePasskey,
  signInWithPasskey,
} from '../users/passkeys.service.ts'
import { startSession } from '../users/sessions.service.ts'
import { ProfileSchema } from './accounts.schemas.ts'
import {
  AuthenticationResponseSchema,
  PasskeySchema,
  RegistrationOptionsSchema,
  RegistrationResponseSchema,
} from './passkeys.schemas.ts'
import { relyingPartyResolver } from './relying-party.ts'
import { setSessionCookie } from './session-cookie.ts'

// Passkeys (docs/api.md#passkeys): a signed-in user registers and manages them under
// /v1/user/passkeys; anyone signs in with one under /v1/auth/passkey.

const AuthenticationOptionsSchema = Type.Object(
  {
    challengeId: Type.String({ description: 'Send it back with the answer' }),
    options: Type.Object(
      {
        challenge: Type.String(),
        rpId: Type.String(),
        timeout: Type.Integer({ description: 'Milliseconds: how long the challenge stays open' }),
        userVerification: Type.Literal('required'),
      },
      {
        description:
          "Options for `navigator.credentials.get()`, in WebAuthn's JSON form (`PublicKeyCredential.parseRequestOptionsFromJSON()`)",
      },
    ),
  },
  { $id: 'PasskeyAuthenticationOptions' },
)

const PasskeyName = SingleLineText(PASSKEY_NAME_LENGTHS)
const PasskeyIdParams = Type.Object({ passkeyId: Type.String() })

export interface PasskeyRouteOptions {
  db: Kysely<DB>
  clock: Clock
  publicUrl: string | null
}

const tags = ['passkeys']
// registering a passkey does not need a verified user, as making an API key does not
const auth = 'authenticated'
const scope = 'account'

/** A signed-in user's passkeys: register, list, rename, delete (/v1 scope). */
export const passkeyRoutes: FastifyPluginAsyncTypebox<PasskeyRouteOptions> = async (
  app,
  { db, clock, publicUrl },
) => {
  const relyingParty = relyingPartyResolver(publicUrl)

  app.post(
    '/v1/user/passkeys/registration-options',
    {
      config: { auth, scope, provenEmail: true },
      schema: {
        operationId: 'passkeyRegistrationOptions',
        summary: 'Start registering a passkey: options for navigator.credentials.create()',
        description:
          'A new one-time challenge, bound to you and open for 5 minutes; your registered passkeys are excluded. No body.',
        tags,
        response: { 200: RegistrationOptionsSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) =>
      // note: the library's type leaves optional what it always fills in
      (await passkeyRegistrationOptions(
        db,
        relyingParty(request),
        clock,
        request.caller.userId,
      )) as Static<typeof RegistrationOptionsSchema>,
  )

  app.post(
    '/v1/user/passkeys',
    {
      config: { auth, scope, located: true, provenEmail: true },
      schema: {
        operationId: 'registerPasskey',
        summary: 'Register a passkey: the answer of navigator.credentials.create()',
        description:
          'Verifies the answer against an open challenge of yours (user verification required, attestation `none`) and stores the passkey. The challenge is used up only when the passkey is stored.',
        tags,
        body: Type.Object(
          { name: Type.Optional(PasskeyName), response: RegistrationResponseSchema },
          {
            additionalProperties: false,
            // shortened: a real answer's byte fields are a few hundred characters each
            examples: [
              {
                name: 'Laptop',
                response: {
                  id: 'k3Vd0Zp8QmXn4LwR7tYb2A',
                  rawId: 'k3Vd0Zp8QmXn4LwR7tYb2A',
                  type: 'public-key',
                  authenticatorAttachment: 'platform',
                  clientExtensionResults: {},
                  response: {
                    clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0',
                    attestationObject: 'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjF',
                    transports: ['internal', 'hybrid'],
                  },
                },
              },
            ],
          },
        ),
        response: { 201: PasskeySchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { name, response } = request.body
      const passkey = await registerPasskey(
        db,
        relyingParty(request),
        clock,
        request.caller.userId,
        {
          ...(name !== undefined && { name }),
          response,
        },
        { by: requesterOf(request) },
      )
      return reply.code(201).header('location', `/v1/user/passkeys/${passkey.id}`).send(passkey)
    },
  )

  app.get(
    '/v1/user/passkeys',
    {
      config: { auth, scope },
      schema: {
        operationId: 'listPasskeys',
        summary: 'List your passkeys, oldest first',
        tags,
        response: { 200: Type.Array(PasskeySchema), ...ERROR_RESPONSES },
      },
    },
    (request) => passkeysOf(db, request.caller.userId),
  )

  app.patch(
    '/v1/user/passkeys/:passkeyId',
    {
      config: { auth, scope },
      schema: {
        operationId: 'renamePasskey',
        summary: 'Rename one of your passkeys',
        tags,
        params: PasskeyIdParams,
        body: Type.Object(
          { name: PasskeyName },
          { additionalProperties: false, examples: [{ name: 'Work phone' }] },
        ),
        response: { 200: PasskeySchema, ...ERROR_RESPONSES },
      },
    },
    (request) =>
      renamePasskey(db, request.caller.userId, request.params.passkeyId, request.body.name),
  )

  app.delete(
    '/v1/user/passkeys/:passkeyId',
    {
      config: { auth, scope },
      schema: {
        operationId: 'deletePasskey',
        summary: 'Delete one of your passkeys: it signs no one in any more',
        tags,
        params: PasskeyIdParams,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await deletePasskey(db, request.caller.userId, request.params.passkeyId, requesterOf(request))
      return reply.code(204).send(null)
    },
  )
}

/** Signing in with a passkey, for anyone (no credential; outside the /v1 key scope). */
export const passkeySignInRoutes: FastifyPluginAsyncTypebox<PasskeyRouteOptions> = async (
  app,
  { db, clock, publicUrl },
) => {
  const relyingParty = relyingPartyResolver(publicUrl)
  const tags = ['sign-in']
  // a challenge, a session cookie: never kept by a cache, never framed or sniffed
  app.addHook('onSend', (_request, reply, _payload, done) => {
    reply.headers(API_RESPONSE_HEADERS)
    done()
  })

  app.post(
    '/v1/auth/passkey/options',
    {
      config: { auth: 'none', anonymousLimit: true, refuseCrossSite: true },
      schema: {
        operationId: 'passkeySignInOptions',
        summary: 'Start signing in with a passkey: options for navigator.credentials.get()',
        description:
          'A new one-time challenge, open for 5 minutes, and its id. No account is named: the authenticator offers the passkeys it holds for this service. No body.',
        tags,
        response: { 200: AuthenticationOptionsSchema, ...ERROR_RESPONSES },
      },
    },
    async (request) =>
      // note: the library's type leaves optional what it always fills in
      (await passkeyAuthenticationOptions(db, relyingParty(request), clock)) as Static<
        typeof AuthenticationOptionsSchema
      >,
  )

  app.post(
    '/v1/auth/passkey/login',
    {
      config: { auth: 'none', anonymousLimit: true, refuseCrossSite: true },
      schema: {
        operationId: 'passkeySignIn',
        summary: 'Sign in with a passkey: the answer of navigator.credentials.get()',
        description:
          'Verifies the answer against the challenge named (user verification required) and the passkey it was made with, starts a session (cookie `statusd_session`, method `passkey`) and answers your profile, as signing in with a password does. Whatever is wrong (an unknown, used or expired challenge, an unknown or deleted passkey, an answer to another challenge) is the same 401 `invalidCredentials`.',
        tags,
        body: Type.Object(
          {
            challengeId: Type.String({ minLength: 1, maxLength: 64 }),
            response: AuthenticationResponseSchema,
          },
          {
            additionalProperties: false,
            // shortened: a real answer's byte fields are a few hundred characters each
            examples: [
              {
                challengeId: 'Vq2xN8cLr4TzK1pW',
                response: {
                  id: 'k3Vd0Zp8QmXn4LwR7tYb2A',
                  rawId: 'k3Vd0Zp8QmXn4LwR7tYb2A',
                  type: 'public-key',
                  clientExtensionResults: {},
                  response: {
                    clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0',
                    authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ',
                    signature: 'MEUCIQDx2v7Kp9yq5wZ3',
                  },
                },
              },
            ],
          },
        ),
        response: { 200: ProfileSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { ip, userAgent } = requesterOf(request)
      const { userId } = await signInWithPasskey(db, relyingParty(request), clock, request.body, {
        ip,
        userAgent,
      })
      // note: a new token every time, whatever cookie came with the request (session fixation)
      const { token } = await startSession(db, {
        userId,
        method: 'passkey',
        userAgent: request.headers['user-agent'],
        ip: request.ip,
        clock,
      })
      setSessionCookie(reply, token, publicUrl)
      return profileOf(db, userId)
    },
  )
}
