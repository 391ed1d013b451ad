import { Type } from 'typebox'
import { StringEnum, Timestamp } from '../../lib/schema.ts'
import { SCOPES } from './scopes.ts'

// The shapes of API keys in answers (docs/api.md#your-api-keys), apart from the routes so
// the app can take its types from them.

const ScopesSchema = Type.Array(StringEnum(SCOPES), {
  description:
    'What the key may do (docs/accounts.md#scoped-keys); a key made before scopes existed has every scope',
})

const StatusIdsSchema = Type.Union([Type.Array(Type.String()), Type.Null()], {
  description:
    'The statuses the key is confined to (a device key): any other status is 404 to it. null: not confined',
})

export const ApiKeySchema = Type.Object(
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
    scopes: ScopesSchema,
    statusIds: StatusIdsSchema,
  },
  { $id: 'ApiKey', description: 'One of your API keys, without its secret' },
)

export const NewApiKeySchema = Type.Object(
  {
    ...ApiKeySchema.properties,
    key: Type.String({ description: 'The secret: shown in this response only, never again' }),
  },
  { $id: 'NewApiKey', description: 'A new API key, with its secret (shown once)' },
)

export const RotatedApiKeySchema = Type.Object(
  {
    ...NewApiKeySchema.properties,
    replaced: Type.Object(ApiKeySchema.properties, {
      description: 'The key this one replaces: revoked now, or expiring after the grace period',
    }),
  },
  { $id: 'RotatedApiKey', description: 'The new key of a rotation, and the key it replaces' },
)
