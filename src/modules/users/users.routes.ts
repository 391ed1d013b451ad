import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { StringEnum } from '../../lib/schema.ts'
import { ALL_SCOPES, SCOPES } from '../keys/scopes.ts'

const CredentialSchema = Type.Object(
  {
    kind: StringEnum(['key', 'session'], {
      description: 'An API key, or a browser session (the sign-in cookie)',
    }),
    id: Type.String({ description: "The key's id (as in /v1/user/api-keys), or the session's" }),
    scopes: Type.Array(StringEnum(SCOPES), {
      description:
        'What the credential may do (docs/accounts.md#scoped-keys); a session: every scope',
    }),
    statusIds: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: 'The statuses a key is confined to (a device key); null: not confined',
    }),
  },
  { description: 'The credential this request was made with' },
)

export const CheckAuthSchema = Type.Object(
  {
    userId: Type.String(),
    name: Type.String(),
    authLevel: StringEnum(['verified', 'authenticated']),
    plan: Type.String(),
    credential: CredentialSchema,
  },
  {
    $id: 'CheckAuth',
    description: 'Who the key belongs to, and what the credential may do',
    examples: [
      {
        userId: 'svd95C2ndr5UElNNoAhG6',
        name: 'admin',
        authLevel: 'verified',
        plan: 'pro',
        credential: {
          kind: 'key',
          id: 'jPEkZ2LZ0t2lJwqD7tXyQ',
          scopes: ['status:read', 'status:value'],
          statusIds: ['xuZ3iNb7pHa0oq1PvRfaD'],
        },
      },
    ],
  },
)

/** GET /v1/checkAuth — who the key belongs to; works at either authorization level. */
export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/checkAuth',
    {
      config: { auth: 'authenticated' },
      schema: {
        operationId: 'checkAuth',
        summary: 'Check an API key: its user, authorization level, plan, scopes and statuses',
        description:
          'Needs no scope: any working key, limited or not, may ask who it is and what it may do.',
        tags: ['users'],
        response: { 200: CheckAuthSchema, ...ERROR_RESPONSES },
      },
    },
    async ({ caller }) => ({
      userId: caller.userId,
      name: caller.name,
      authLevel: caller.authLevel,
      plan: caller.plan,
      credential: {
        kind: caller.credential.kind,
        id: caller.credential.id,
        // a session may do all its user may: every scope, every status
        scopes: [...(caller.credential.kind === 'key' ? caller.credential.scopes : ALL_SCOPES)],
        statusIds:
          caller.credential.kind === 'key' && caller.credential.statusIds !== null
            ? [...caller.credential.statusIds]
            : null,
      },
    }),
  )
}
