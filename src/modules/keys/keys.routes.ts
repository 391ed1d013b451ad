import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { Timestamp } from '../../lib/schema.ts'
import { SingleLineText } from '../../lib/text.ts'
import {
  apiKeysOf,
  createOwnApiKey,
  type KeyDeps,
  LABEL_LENGTHS,
  MAX_GRACE_SECONDS,
  revokeOwnKey,
  rotateOwnKey,
} from './keys.service.ts'

const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to tell keys apart' }),
    label: Type.Union([Type.String(), Type.Null()]),
    createdAt: Timestamp(),
    expiresAt: Type.Union([Timestamp(), Type.Null()]),
    revokedAt: Type.Union([Timestamp(), Type.Null()]),
    replacedBy: Type.Union([Type.String(), Type.Null()], {
      description: 'The id of the key a rotation replaced this one with (null: never rotated)',
    }),
  },
  { $id: 'ApiKey', description: 'One of your API keys, without its secret' },
)

const NewApiKeySchema = Type.Object(
  {
    ...ApiKeySchema.properties,
    key: Type.String({ description: 'The secret: shown in this response only, never again' }),
  },
  { $id: 'NewApiKey', description: 'A new API key, with its secret (shown once)' },
)

const RotatedApiKeySchema = Type.Object(
  {
    ...NewApiKeySchema.properties,
    replaced: Type.Object(ApiKeySchema.properties, {
      description: 'The key this one replaces: revoked now, or expiring after the grace period',
    }),
  },
  { $id: 'RotatedApiKey', description: 'The new key of a rotation, and the key it replaces' },
)

const RotateApiKeyBodySchema = Type.Object(
  {
    graceSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_SECONDS,
        description: 'How long the old key keeps working (default 0: revoked at once)',
      }),
    ),
  },
  { additionalProperties: false },
)

const KeyIdParamsSchema = Type.Object({ keyId: Type.String() })

const CreateApiKeyBodySchema = Type.Object(
  {
    // the text rules of a status name (docs/api.md#validation-rules), 1 to 100 characters
    label: Type.Optional(SingleLineText(LABEL_LENGTHS)),
    expiresAt: Type.Optional(Timestamp({ description: 'When the key stops working (future)' })),
  },
  { additionalProperties: false },
)

const tags = ['api keys']
// managing one's own keys does not need a verified user
const auth = 'authenticated'

/**
 * A user's own API keys (docs/api.md#your-api-keys): list (never the secret), create (shown
 * once), rotate, revoke.
 */
export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ deps: KeyDeps }> = async (app, { deps }) => {
  const { db } = deps
  app.get(
    '/v1/user/api-keys',
    {
      config: { auth },
      schema: {
        operationId: 'listMyApiKeys',
        summary: 'List your API keys (prefix only, never the secret)',
        description:
          'Oldest first: every working key, and the 100 keys that stopped working (revoked or expired) last. Creating or rotating a key deletes older ended keys.',
        tags,
        response: { 200: Type.Array(ApiKeySchema), ...ERROR_RESPONSES },
      },
    },
    (request) => apiKeysOf(db, request.caller.userId),
  )

  app.post(
    '/v1/user/api-keys',
    {
      // every property is optional, so no body at all means "no options"
      config: { auth, bodyOptional: true, located: true },
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key; the secret is in this response only',
        tags,
        body: CreateApiKeyBodySchema,
        response: { 201: NewApiKeySchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const body = request.body
      const { userId: _userId, ...key } = await createOwnApiKey(db, request.caller.userId, {
        ...(body.label !== undefined && { label: body.label }),
        ...(body.expiresAt !== undefined && { expiresAt: body.expiresAt }),
      })
      return reply.code(201).header('location', `/v1/user/api-keys/${key.id}`).send(key)
    },
  )

  app.delete(
    '/v1/user/api-keys/:keyId',
    {
      config: { auth },
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke one of your API keys (it stops working at once)',
        tags,
        params: KeyIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await revokeOwnKey(deps, request.caller.userId, request.params.keyId)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/v1/user/api-keys/:keyId/rotate',
    {
      // every property is optional, so no body at all means "no options"
      config: { auth, bodyOptional: true, located: true },
      schema: {
        operationId: 'rotateApiKey',
        summary: 'Rotate one of your API keys: a new secret (shown once) replaces it',
        description:
          'The new key keeps the label and expiry; `replaced` is the old key as it is now, its `replacedBy` the new one. The old key is revoked at once, or keeps working for `graceSeconds` (at most 24 h, never past its own expiry). A revoked or expired key, or one a rotation already replaced, cannot be rotated (409).',
        tags,
        params: KeyIdParamsSchema,
        body: RotateApiKeyBodySchema,
        response: { 201: RotatedApiKeySchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { userId: _userId, ...key } = await rotateOwnKey(
        deps,
        request.caller.userId,
        request.params.keyId,
        request.body.graceSeconds === undefined ? {} : { graceSeconds: request.body.graceSeconds },
      )
      return reply.code(201).header('location', `/v1/user/api-keys/${key.id}`).send(key)
    },
  )
}
