import { Type } from 'typebox'
import { LANGUAGE_CODES } from '../../i18n/languages.ts'
import { StringEnum, Timestamp } from '../../lib/schema.ts'
import { SingleLineText } from '../../lib/text.ts'
import { MAX_EMAIL_LENGTH } from '../users/email-address.ts'
import { PASSWORD_LENGTHS } from '../users/passwords.ts'
import { USER_NAME_LENGTHS } from '../users/users.service.ts'

/**
 * An e-mail address, at most 254 characters (RFC 5321); its syntax is checked by the service
 * (users/email-address.ts), as for the CLI.
 */
export const EmailSchema = Type.String({
  minLength: 1,
  maxLength: MAX_EMAIL_LENGTH,
  description: 'E-mail address (name@example.com), compared case-insensitively',
})

/** A person's display name: 1 to 60 characters, the text rules of a status name. */
export const NameSchema = SingleLineText(USER_NAME_LENGTHS)

/** A new password; the rest of its rules (common passwords, strength) are the service's. */
export const NewPasswordSchema = Type.String({
  ...PASSWORD_LENGTHS,
  description:
    '12 to 256 characters, not in a large list of common passwords (any case), and scored at least 3 of 4 by a strength estimator (zxcvbn)',
})

/**
 * The language of the mails and notifications a user gets (docs/languages.md): one statusd
 * speaks, or null for none chosen (English).
 */
export const LocaleSchema = Type.Union([StringEnum(LANGUAGE_CODES), Type.Null()], {
  description:
    'The language of the mails and notifications you get (docs/languages.md); null: none chosen, English',
})

/** A password being checked: anything a password could be. */
export const PasswordSchema = Type.String({ minLength: 1, maxLength: PASSWORD_LENGTHS.maxLength })

export const ProfileSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.Union([Type.String(), Type.Null()], {
      description: 'null for a user made without one (the first user, the CLI)',
    }),
    emailVerified: Type.Boolean({
      description: 'The address was confirmed by a link mailed to it',
    }),
    plan: Type.String(),
    authLevel: StringEnum(['verified', 'authenticated']),
    createdAt: Timestamp(),
    hasPassword: Type.Boolean({ description: 'Whether the user can sign in with a password' }),
    admin: Type.Boolean({
      description: 'Whether you are an operator of this service (docs/operations.md#operators)',
    }),
    locale: LocaleSchema,
  },
  {
    $id: 'Profile',
    description: 'Your own account',
    examples: [
      {
        id: 'svd95C2ndr5UElNNoAhG6',
        name: 'Ada',
        email: 'ada@example.com',
        emailVerified: false,
        plan: 'free',
        authLevel: 'verified',
        createdAt: '2026-11-28T09:30:00.000Z',
        hasPassword: true,
        admin: false,
        locale: 'de',
      },
    ],
  },
)

/** The answer to a profile change: the profile, and an address waiting for its link. */
export const ChangedProfileSchema = Type.Object(
  {
    ...ProfileSchema.properties,
    pendingEmail: Type.Optional(
      Type.String({
        description:
          'With e-mail on: the new address a verification link was just sent to. `email` stays as it was until the link is followed (docs/accounts.md#e-mail).',
      }),
    ),
  },
  {
    $id: 'ChangedProfile',
    description: 'Your account after the change',
    examples: [
      {
        id: 'svd95C2ndr5UElNNoAhG6',
        name: 'Ada',
        email: 'ada@example.com',
        emailVerified: true,
        plan: 'free',
        authLevel: 'verified',
        createdAt: '2026-11-28T09:30:00.000Z',
        hasPassword: true,
        admin: false,
        locale: null,
        pendingEmail: 'ada@example.org',
      },
    ],
  },
)

export const SessionSchema = Type.Object(
  {
    id: Type.String(),
    createdAt: Timestamp({ description: 'When it began (sign-up or sign-in)' }),
    lastSeenAt: Timestamp({ description: 'Last used (to within a minute)' }),
    expiresAt: Timestamp({
      description:
        'When it ends unless used again: 14 days after last use, 90 after sign-in at most',
    }),
    method: Type.String({ description: 'How it began: password, signup, passkey, link, setup' }),
    userAgent: Type.Union([Type.String(), Type.Null()]),
    ip: Type.Union([Type.String(), Type.Null()], { description: 'The address it began from' }),
    current: Type.Boolean({ description: 'The session this request came with' }),
  },
  {
    $id: 'Session',
    description: 'A signed-in browser',
    examples: [
      {
        id: 'Xq3kP0vZ8mYt1LwR5aBcD',
        createdAt: '2026-11-28T09:30:00.000Z',
        lastSeenAt: '2026-11-28T10:02:00.000Z',
        expiresAt: '2026-12-12T10:02:00.000Z',
        method: 'password',
        userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
        ip: '192.0.2.10',
        current: true,
      },
    ],
  },
)

/**
 * What a person needs to know before signing up or in (`GET /v1/auth/settings`): who may
 * sign up, and whether this service sends mail. Nothing secret: the same can be learnt by
 * trying to sign up or to reset a password.
 */
export const AuthSettingsSchema = Type.Object(
  {
    signup: Type.Union([Type.Literal('open'), Type.Literal('invite')], {
      description:
        '`open`: anyone may sign up; `invite`: only with an invitation link (SIGNUP, docs/accounts.md#signing-up)',
    }),
    email: Type.Boolean({
      description:
        'This service sends mail (SMTP_URL): addresses are confirmed by a mailed link, passwords reset by one',
    }),
  },
  {
    $id: 'AuthSettings',
    additionalProperties: false,
    description: 'How people join and sign in to this service',
    examples: [{ signup: 'invite', email: true }],
  },
)
