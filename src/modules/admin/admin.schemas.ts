import { Type } from 'typebox'
import { StringEnum, Timestamp } from '../../lib/schema.ts'
import { EmailSchema, NameSchema } from '../accounts/accounts.schemas.ts'
import { MAX_SEARCH_LENGTH, USER_PAGE } from './admin.service.ts'

const USER_EXAMPLE = {
  id: 'svd95C2ndr5UElNNoAhG6',
  name: 'Ada',
  email: 'ada@example.com',
  plan: 'free',
  authLevel: 'verified',
  admin: false,
  disabled: false,
  disabledAt: null,
  emailVerified: true,
  createdAt: '2026-11-28T09:30:00.000Z',
  statusCount: 3,
  lastSignInAt: '2026-11-28T09:31:00.000Z',
}

export const AdminUserSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.Union([Type.String(), Type.Null()], {
      description: 'null for a user made without one (the first user, the CLI)',
    }),
    plan: Type.String(),
    authLevel: StringEnum(['verified', 'authenticated']),
    admin: Type.Boolean({ description: 'An operator of this service' }),
    disabled: Type.Boolean({ description: 'An operator disabled the account' }),
    disabledAt: Type.Union([Timestamp(), Type.Null()], {
      description: 'When it was disabled (null: enabled)',
    }),
    emailVerified: Type.Boolean({
      description: 'The address was confirmed by a mailed link, or vouched for by an operator',
    }),
    createdAt: Timestamp(),
    statusCount: Type.Integer({ minimum: 0, description: 'Statuses the user owns' }),
    lastSignInAt: Type.Union([Timestamp(), Type.Null()], {
      description: "When the user's latest session began (null: no session now)",
    }),
  },
  {
    $id: 'AdminUser',
    description: 'A user, as the operators see them',
    examples: [USER_EXAMPLE],
  },
)

export const AdminUserListQuerySchema = Type.Object({
  q: Type.Optional(
    Type.String({
      maxLength: MAX_SEARCH_LENGTH,
      description: 'Only users whose name or e-mail address holds this text (any case)',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: USER_PAGE.max,
      description: `Users per page (default ${USER_PAGE.default})`,
    }),
  ),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
})

export const AdminUserParamsSchema = Type.Object({ userId: Type.String({ maxLength: 64 }) })

export const AdminUserChangesSchema = Type.Object(
  {
    plan: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A plan name' })),
    verified: Type.Optional(
      Type.Boolean({
        description:
          'Verified users may do everything their plan allows; verifying vouches for the address',
      }),
    ),
    admin: Type.Optional(Type.Boolean({ description: 'Make the user an operator, or not' })),
    disabled: Type.Optional(
      Type.Boolean({
        description:
          'A disabled user signs in by no method, their keys answer 401, their sessions and streams end',
      }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ plan: 'pro' }, { disabled: true }],
  },
)

export const AdminSignInLinkSchema = Type.Object(
  {
    url: Type.String({ description: 'The link: whoever opens it signs in as the user, once' }),
    expiresAt: Timestamp(),
  },
  {
    $id: 'AdminSignInLink',
    description: 'A one-time sign-in link, to hand over',
    examples: [
      {
        url: 'https://status.example.com/auth/link/sdl_3Rk0dV5d0y7cW0u7ZbB4fZ2oGd5yRrQeQy8G0z9xS1c',
        expiresAt: '2026-11-28T10:30:00.000Z',
      },
    ],
  },
)

export const AdminInvitationBodySchema = Type.Object(
  {
    email: EmailSchema,
    name: Type.Optional(NameSchema),
    plan: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  {
    additionalProperties: false,
    examples: [{ email: 'grace@example.com', name: 'Grace' }],
  },
)

export const AdminInvitationSchema = Type.Object(
  {
    user: AdminUserSchema,
    mailed: Type.Boolean({ description: 'The link was mailed to the address (SMTP is set)' }),
    url: Type.Union([Type.String(), Type.Null()], {
      description: 'The sign-in link to hand over when it was not mailed (null when it was)',
    }),
    expiresAt: Timestamp({ description: 'When the link stops working' }),
  },
  {
    $id: 'AdminInvitation',
    description: 'The account made for an invited person, and how their link reaches them',
    examples: [
      {
        user: { ...USER_EXAMPLE, name: 'grace', email: 'grace@example.com', lastSignInAt: null },
        mailed: true,
        url: null,
        expiresAt: '2026-12-05T09:30:00.000Z',
      },
    ],
  },
)

export const InstanceSchema = Type.Object(
  {
    version: Type.String({ description: "statusd's version (semver)" }),
    engine: Type.String({ description: 'The storage engine: sqlite or postgres' }),
    databaseBytes: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'The size of the database (null where it cannot be told)',
    }),
    startedAt: Timestamp({ description: 'When this instance started' }),
    uptimeSeconds: Type.Integer({ minimum: 0 }),
    signup: StringEnum(['invite', 'open'], { description: 'Who may sign up (SIGNUP)' }),
    smtp: Type.Boolean({ description: 'The service sends e-mail (SMTP_URL is set)' }),
    push: Type.Boolean({ description: 'Browser push has its key pair' }),
    mqtt: Type.Boolean({ description: 'The MQTT bridge is set up (MQTT_URL is set)' }),
    outboxBacklog: Type.Integer({
      minimum: 0,
      description: 'Events waiting to be fanned out to notification channels',
    }),
    openStreams: Type.Integer({ minimum: 0, description: 'Event streams open on this instance' }),
    users: Type.Integer({ minimum: 0 }),
  },
  {
    $id: 'Instance',
    description: 'The state of the instance that answered',
    examples: [
      {
        version: '0.1.0',
        engine: 'sqlite',
        databaseBytes: 4243456,
        startedAt: '2026-11-28T09:00:00.000Z',
        uptimeSeconds: 1800,
        signup: 'invite',
        smtp: true,
        push: true,
        mqtt: false,
        outboxBacklog: 0,
        openStreams: 4,
        users: 12,
      },
    ],
  },
)
