import { Type } from 'typebox'
import { StringEnum, Timestamp } from '../../lib/schema.ts'

// The shapes of passkeys in answers and requests (docs/api.md#passkeys), apart from the
// routes so the app and the setup routes can take them.

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

/** base64url without padding, as WebAuthn's JSON forms carry bytes. */
const Base64Url = (description: string, maxLength = 4096) =>
  Type.String({ pattern: '^[A-Za-z0-9_-]*$', maxLength, description })

const Transports = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })

// note: WebAuthn Level 3's RegistrationResponseJSON and AuthenticationResponseJSON, what
// `PublicKeyCredential.toJSON()` gives; the extension outputs are the browser's to name
const credentialFields = {
  id: Base64Url('The credential id', 1366),
  rawId: Base64Url('The credential id again', 1366),
  type: Type.Literal('public-key'),
  authenticatorAttachment: Type.Optional(StringEnum(['platform', 'cross-platform'])),
  clientExtensionResults: Type.Object({}, { additionalProperties: true }),
}

export const RegistrationResponseSchema = Type.Object(
  {
    ...credentialFields,
    response: Type.Object(
      {
        clientDataJSON: Base64Url('The client data the authenticator signed'),
        attestationObject: Base64Url('The new credential and its attestation', 8192),
        authenticatorData: Type.Optional(Base64Url('The authenticator data', 8192)),
        transports: Type.Optional(Transports),
        publicKeyAlgorithm: Type.Optional(Type.Integer()),
        publicKey: Type.Optional(Base64Url('The public key, SPKI', 8192)),
      },
      { additionalProperties: false },
    ),
  },
  {
    additionalProperties: false,
    description:
      "`navigator.credentials.create()`'s answer, as `PublicKeyCredential.toJSON()` gives it",
  },
)

export const AuthenticationResponseSchema = Type.Object(
  {
    ...credentialFields,
    response: Type.Object(
      {
        clientDataJSON: Base64Url('The client data the authenticator signed'),
        authenticatorData: Base64Url('The authenticator data', 8192),
        signature: Base64Url('The signature over both', 1024),
        userHandle: Type.Optional(Base64Url('The user handle the passkey was made for', 128)),
      },
      { additionalProperties: false },
    ),
  },
  {
    additionalProperties: false,
    description:
      "`navigator.credentials.get()`'s answer, as `PublicKeyCredential.toJSON()` gives it",
  },
)
