import { Type } from 'typebox'
import { DEFAULT_PAGE, MAX_PAGE } from './audit.service.ts'

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description })

const PersonSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.Union([Type.String(), Type.Null()], {
      description: 'null when the account has since been deleted',
    }),
  },
  { additionalProperties: false },
)

const eventProperties = {
  id: Type.String(),
  at: Type.String({ description: 'When it happened (ISO 8601, UTC)' }),
  kind: Type.String({
    description:
      "What happened: `signIn`, `signInFailed`, `signOut`, `sessionRevoked`, `passwordChanged`, `passwordReset`, `emailChanged`, `emailVerified`, `keyCreated`, `keyRotated`, `keyRevoked`, `keysRevokedAll`, `passkeyAdded`, `passkeyRemoved`, `roleGranted`, `roleChanged`, `roleRemoved`, `roleAccepted`, `statusTransferOffered`, `statusTransferred`, `adminGranted`, `adminRevoked`, `accountDeleted`; an operator's actions as `admin.…` (docs/security.md#security-log)",
  }),
  actor: Type.Union([PersonSchema, Type.Null()], {
    description: 'Who acted; null for someone not signed in, or the command line',
  }),
  ip: Nullable(Type.String(), 'The client address it came from'),
  userAgent: Nullable(Type.String(), 'The User-Agent it came with'),
  detail: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description:
      "What else there is to know (a sign-in's `method`, a key's `keyId` and `label`, a role's `statusId` and `role`); never a secret",
  }),
}

/** An entry of `GET /v1/user/security-events`. */
export const SecurityEventSchema = Type.Object(eventProperties, {
  $id: 'SecurityEvent',
  additionalProperties: false,
  description: 'Something that happened to your account (docs/security.md#security-log)',
})

/** An entry of `GET /v1/admin/audit`: also the account concerned. */
export const AuditEventSchema = Type.Object(
  {
    ...eventProperties,
    user: Type.Union([PersonSchema, Type.Null()], {
      description: 'The account concerned; null when none is (a sign-in to an unknown address)',
    }),
  },
  {
    $id: 'AuditEvent',
    additionalProperties: false,
    description: 'Something that happened to an account, or an operator did',
  },
)

const limit = Type.Optional(
  Type.Integer({
    minimum: 1,
    maximum: MAX_PAGE,
    description: `Events per page (default ${DEFAULT_PAGE})`,
  }),
)
const cursor = Type.Optional(
  Type.String({ maxLength: 200, description: 'From the `Link: <…>; rel="next"` header' }),
)

export const SecurityEventsQuerySchema = Type.Object({ limit, cursor })

export const AuditQuerySchema = Type.Object({
  limit,
  cursor,
  userId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: "Only this account's events" }),
  ),
  kind: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z][A-Za-z.]{0,63}$',
      description: 'Only events of this kind',
    }),
  ),
})
