import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { StringEnum, Timestamp } from '../../lib/schema.ts'
import { SingleLineText } from '../../lib/text.ts'
import { requesterOf } from '../audit/security-events.ts'
import { ApiKeySchema, NewApiKeySchema, RotatedApiKeySchema } from './keys.schemas.ts'
import {
  apiKeysOfCaller,
  createOwnApiKey,
  type KeyCaller,
  type KeyDeps,
  LABEL_LENGTHS,
  MAX_GRACE_SECONDS,
  revokeAllKeys,
  revokeOwnKey,
  rotateOwnKey,
} from './keys.service.ts'
import { expandScopes, MAX_KEY_STATUSES, SCOPE_NAMES } from './scopes.ts'

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
  { additionalProperties: false, examples: [{ graceSeconds: 300 }] },
)

/** The caller as the key services see it: also who asks, for the security log. */
const callerOf = (request: FastifyRequest): KeyCaller => ({
  ...request.caller,
  requester: requesterOf(request),
})

const KeyIdParamsSchema = Type.Object({ keyId: Type.String() })

const CreateApiKeyBodySchema = Type.Object(
  {
    // the text rules of a status name (docs/api.md#validation-rules), 1 to 100 characters
    label: Type.Optional(SingleLineText(LABEL_LENGTHS)),
    expiresAt: Type.Optional(Timestamp({ description: 'When the key stops working (future)' })),
    scopes: Type.Optional(
      Type.Array(StringEnum(SCOPE_NAMES), {
        minItems: 1,
        uniqueItems: true,
        description:
          'What the key may do; `status:*` stands for the four status scopes. Default `["status:*"]`. A key making a key may give it only scopes it has itself.',
      }),
    ),
    statusIds: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: MAX_KEY_STATUSES,
        uniqueItems: true,
        description:
          'Confines the key to these statuses (each one you own or have a role on): the device key. Default: not confined. A confined key making a key must confine it to some of its own statuses.',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        label: 'Office door sensor',
        scopes: ['status:value'],
        statusIds: ['xuZ3iNb7pHa0oq1PvRfaD'],
      },
    ],
  },
)

const RevokeAllBodySchema = Type.Object(
  {
    keep: Type.Optional(
      Type.String({
        description: 'The id of one of your working keys to keep (usually the one you call with)',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ keep: 'jPEkZ2LZ0t2lJwqD7tXyQ' }] },
)

const RevokedAllSchema = Type.Object(
  { revoked: Type.Integer({ minimum: 0, description: 'How many keys were revoked' }) },
  {
    $id: 'RevokedKeys',
    description: 'How many keys revoke-all revoked',
    examples: [{ revoked: 3 }],
  },
)

const tags = ['api keys']
// managing one's own keys does not need a verified user
const auth = 'authenticated'
// an API key manages keys only with the `keys` scope (docs/accounts.md#scoped-keys)
const scope = 'keys'

/**
 * A user's own API keys (docs/api.md#your-api-keys): list (never the secret), create (shown
 * once), rotate, revoke.
 */
export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ deps: KeyDeps }> = async (app, { deps }) => {
  app.get(
    '/v1/user/api-keys',
    {
      config: { auth, scope },
      schema: {
        operationId: 'listMyApiKeys',
        summary: 'List your API keys (prefix only, never the secret)',
        description:
          'Oldest first: every working key, and the 100 keys that stopped working (revoked or expired) last. Creating or rotating a key deletes older ended keys. Called with a key confined to statuses (`statusIds`), only that key: it manages no key but itself.',
        tags,
        response: { 200: Type.Array(ApiKeySchema), ...ERROR_RESPONSES },
      },
    },
    (request) => apiKeysOfCaller(deps, request.caller),
  )

  app.post(
    '/v1/user/api-keys',
    {
      // every property is optional, so no body at all means "no options"
      config: { auth, scope, bodyOptional: true, located: true, provenEmail: true },
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key; the secret is in this response only',
        description:
          "With `scopes` and `statusIds` the key is limited: what it may do, and which statuses it reaches (a device key). Called with an API key, the new key may have no scope and no status beyond the calling key's own (403 insufficientScope naming what is beyond). A status id you neither own nor have a role on is 400 validationError.",
        tags,
        body: CreateApiKeyBodySchema,
        response: { 201: NewApiKeySchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const body = request.body
      const { userId: _userId, ...key } = await createOwnApiKey(deps, callerOf(request), {
        ...(body.label !== undefined && { label: body.label }),
        ...(body.expiresAt !== undefined && { expiresAt: body.expiresAt }),
        ...(body.scopes !== undefined && { scopes: expandScopes(body.scopes) }),
        ...(body.statusIds !== undefined && { statusIds: body.statusIds }),
      })
      return reply.code(201).header('location', `/v1/user/api-keys/${key.id}`).send(key)
    },
  )

  app.delete(
    '/v1/user/api-keys/:keyId',
    {
      config: { auth, scope },
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke one of your API keys (it stops working at once)',
        description:
          "Another user's key, or one that does not exist, is 404; so is every key but itself to a key confined to statuses (`statusIds`).",
        tags,
        params: KeyIdParamsSchema,
        response: { 204: Type.Null(), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      await revokeOwnKey(deps, callerOf(request), request.params.keyId)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/v1/user/api-keys/:keyId/rotate',
    {
      // every property is optional, so no body at all means "no options"
      config: { auth, scope, bodyOptional: true, located: true, provenEmail: true },
      schema: {
        operationId: 'rotateApiKey',
        summary: 'Rotate one of your API keys: a new secret (shown once) replaces it',
        description:
          "The new key keeps the label, expiry, scopes and statuses; `replaced` is the old key as it is now, its `replacedBy` the new one. The old key is revoked at once, or keeps working for `graceSeconds` (at most 24 h, never past its own expiry). A revoked or expired key, or one a rotation already replaced, cannot be rotated (409). Called with an API key, the key rotated may have no scope or status beyond the calling key's (403 insufficientScope); a key confined to statuses rotates only itself (404 for any other key).",
        tags,
        params: KeyIdParamsSchema,
        body: RotateApiKeyBodySchema,
        response: { 201: RotatedApiKeySchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { userId: _userId, ...key } = await rotateOwnKey(
        deps,
        callerOf(request),
        request.params.keyId,
        request.body.graceSeconds === undefined ? {} : { graceSeconds: request.body.graceSeconds },
      )
      return reply.code(201).header('location', `/v1/user/api-keys/${key.id}`).send(key)
    },
  )

  app.post(
    '/v1/user/api-keys/revoke-all',
    {
      // every property is optional, so no body at all means "keep none"
      config: { auth, scope, bodyOptional: true },
      schema: {
        operationId: 'revokeAllApiKeys',
        summary: 'Revoke every working API key of yours at once, but the one you keep',
        description:
          'Locks out whoever holds a leaked key, in one step (docs/accounts.md#locking-an-attacker-out): every working key but `keep` stops working at once, its open event streams end, and every instance forgets it. `keep` must be one of your working keys (404 otherwise). Without `keep`, the key you call with is revoked too. A key confined to statuses (`statusIds`) manages no key but itself: it revokes only itself, and `keep` naming another key is 404.',
        tags,
        body: RevokeAllBodySchema,
        response: { 200: RevokedAllSchema, ...ERROR_RESPONSES },
      },
    },
    (request) => revokeAllKeys(deps, callerOf(request), request.body.keep),
  )
}
