import { Type } from 'typebox'
import { StringEnum } from '../../lib/schema.ts'
import { SCOPES } from '../keys/scopes.ts'

// The answer of GET /v1/checkAuth (docs/api.md#check-a-key), apart from the routes so that
// clients can take its type from it.

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
