import { Type } from 'typebox'
import { Timestamp } from '../../lib/schema.ts'

// The shapes of passkeys in answers (docs/api.md#passkeys), apart from the routes so the app
// can take its types from them.

export const PasskeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    transports: Type.Array(Type.String(), {
      description: 'How the authenticator said it can be reached (`internal`, `usb`, `hybrid`, …)',
    }),
    createdAt: Timestamp(),
    lastUsedAt: Type.Union([Timestamp(), Type.Null()], {
      description: 'When it last signed you in; null: never',
    }),
  },
  {
    $id: 'Passkey',
    description: 'One of your passkeys (never its key or credential id)',
    examples: [
      {
        id: 'pK3vWq0cRk2yVb8nJt4sX',
        name: 'Laptop',
        transports: ['internal', 'hybrid'],
        createdAt: '2026-11-28T09:12:00.000Z',
        lastUsedAt: null,
      },
    ],
  },
)

const CredentialDescriptor = Type.Object({
  id: Type.String(),
  type: Type.Literal('public-key'),
  transports: Type.Optional(Type.Array(Type.String())),
})

export const RegistrationOptionsSchema = Type.Object(
  {
    challenge: Type.String(),
    rp: Type.Object({ name: Type.String(), id: Type.String() }),
    user: Type.Object({ id: Type.String(), name: Type.String(), displayName: Type.String() }),
    pubKeyCredParams: Type.Array(
      Type.Object({ alg: Type.Integer(), type: Type.Literal('public-key') }),
    ),
    timeout: Type.Integer({ description: 'Milliseconds: how long the challenge stays open' }),
    attestation: Type.Literal('none'),
    excludeCredentials: Type.Array(CredentialDescriptor, {
      description: 'Your passkeys already registered: an authenticator holding one makes none',
    }),
    authenticatorSelection: Type.Object({
      residentKey: Type.Literal('required'),
      requireResidentKey: Type.Literal(true),
      userVerification: Type.Literal('required'),
    }),
    extensions: Type.Object({ credProps: Type.Boolean() }),
    hints: Type.Array(Type.String()),
  },
  {
    $id: 'PasskeyRegistrationOptions',
    description:
      "Options for `navigator.credentials.create()`, in WebAuthn's JSON form (`PublicKeyCredential.parseCreationOptionsFromJSON()`)",
  },
)
