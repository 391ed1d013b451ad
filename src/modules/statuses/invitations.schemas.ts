import type { Static } from 'typebox'
import { Type } from 'typebox'
import { StringEnum, Timestamp } from '../../lib/schema.ts'
import { MAX_EMAIL_LENGTH } from '../users/email-address.ts'
import { GRANTABLE_ROLES, ROLES } from './sharing.schemas.ts'

/** A role offered to a user, waiting for their consent (docs/accounts.md#invitations). */
export const RoleInvitationSchema = Type.Object(
  {
    id: Type.String({ description: 'The invitation id (accept or decline it by this id)' }),
    statusId: Type.String(),
    statusName: Type.String({
      description: 'The name of the status: all an invitee who cannot see it yet is told of it',
    }),
    userId: Type.String({ description: 'Who is invited' }),
    role: StringEnum(ROLES, {
      description: 'The role offered; `owner`: the status itself (docs/sharing.md#transfer)',
    }),
    invitedBy: Type.Object(
      { userId: Type.String(), name: Type.String() },
      { additionalProperties: false, description: 'The owner who invited' },
    ),
    createdAt: Timestamp(),
  },
  {
    $id: 'RoleInvitation',
    additionalProperties: false,
    description: 'A pending invitation to a role on a status',
    examples: [
      {
        id: 'kQ2m8ZxR0vLwT5aN7pYcE',
        statusId: 'aQHwS9dTxhRMpO5YH1z4I',
        statusName: 'Meeting room 4',
        userId: 'Jt0bq3WkLs8dF1xVn6RoP',
        role: 'updater',
        invitedBy: { userId: 'Zr4pC7mQ1sXe9uHb2LwNd', name: 'Olivia' },
        createdAt: '2030-06-01T12:00:00.000Z',
      },
    ],
  },
)
export type RoleInvitation = Static<typeof RoleInvitationSchema>

export const InvitationIdParamsSchema = Type.Object({ id: Type.String() })
export const StatusInvitationParamsSchema = Type.Object({
  statusId: Type.String(),
  id: Type.String(),
})
export const InvitationTokenParamsSchema = Type.Object({ token: Type.String() })

/** The most uses one invitation link may have. */
export const MAX_LINK_USES = 100
/** How long a link lasts when the request names no `expiresAt`, and the most it may last. */
export const DEFAULT_LINK_DAYS = 7
export const MAX_LINK_DAYS = 30

/** Body of `POST /v1/status/:statusId/invitations`. */
export const CreateInvitationLinkSchema = Type.Object(
  {
    role: StringEnum(GRANTABLE_ROLES, { description: 'The role the link grants' }),
    email: Type.Optional(
      Type.String({
        maxLength: MAX_EMAIL_LENGTH,
        description:
          'Only the user with this address (compared case-insensitively) may use the link; mailed the link when the server sends mail',
      }),
    ),
    maxUses: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LINK_USES,
        description: 'How many people may accept it (default 1)',
      }),
    ),
    expiresAt: Type.Optional(
      Type.String({
        maxLength: 64,
        description: `When it stops working: an ISO 8601 date or date-time with a zone, in the future and at most ${MAX_LINK_DAYS} days ahead (default ${DEFAULT_LINK_DAYS} days)`,
      }),
    ),
  },
  {
    $id: 'InvitationLinkInput',
    additionalProperties: false,
    examples: [{ role: 'subscriber', maxUses: 5 }],
  },
)
export type CreateInvitationLink = Static<typeof CreateInvitationLinkSchema>

export const LINK_STATES = ['active', 'expired', 'usedUp', 'revoked'] as const
export type LinkState = (typeof LINK_STATES)[number]

const linkProperties = {
  id: Type.String(),
  role: StringEnum(GRANTABLE_ROLES),
  email: Type.Union([Type.String(), Type.Null()], {
    description: 'The address the link is bound to (folded to lower case); null: anyone',
  }),
  maxUses: Type.Integer({ minimum: 1 }),
  usesLeft: Type.Integer({ minimum: 0 }),
  createdAt: Timestamp(),
  expiresAt: Timestamp(),
  state: StringEnum(LINK_STATES, {
    description: 'active: it can be accepted; otherwise why it cannot (410 gone)',
  }),
}

/** An invitation link as the owner lists it: never its token. */
export const InvitationLinkSchema = Type.Object(linkProperties, {
  $id: 'InvitationLink',
  additionalProperties: false,
  description: 'An invitation link of a status (its token is shown only when it is made)',
  examples: [
    {
      id: 'p1Yt7Qm2Zk9Lw3Xr5Vb8N',
      role: 'subscriber',
      email: null,
      maxUses: 5,
      usesLeft: 4,
      createdAt: '2030-06-01T12:00:00.000Z',
      expiresAt: '2030-06-08T12:00:00.000Z',
      state: 'active',
    },
  ],
})
export type InvitationLink = Static<typeof InvitationLinkSchema>

/** A new invitation link: the entry plus its URL, shown this once. */
export const CreatedInvitationLinkSchema = Type.Object(
  {
    ...linkProperties,
    url: Type.String({ description: 'The link to hand over: shown only in this response' }),
    mailed: Type.Boolean({
      description:
        'true when the link is being mailed to `email` (the server sends mail); the URL is for you to hand over either way',
    }),
  },
  {
    $id: 'CreatedInvitationLink',
    additionalProperties: false,
    description: 'A new invitation link with its URL (shown once)',
    examples: [
      {
        id: 'p1Yt7Qm2Zk9Lw3Xr5Vb8N',
        role: 'subscriber',
        email: null,
        maxUses: 5,
        usesLeft: 5,
        createdAt: '2030-06-01T12:00:00.000Z',
        expiresAt: '2030-06-08T12:00:00.000Z',
        state: 'active',
        mailed: false,
        url: 'https://status.example.com/invite/sdi_3Nf8kQ0zLr5Tw1Yx7Vb2Mc9Hd4Pe6Sg0Ja8Ku2Lo5Qi',
      },
    ],
  },
)

/** What anyone holding a link is told before accepting it. */
export const InvitationLinkPreviewSchema = Type.Object(
  {
    statusName: Type.String(),
    inviterName: Type.String(),
    role: StringEnum(GRANTABLE_ROLES),
    expiresAt: Timestamp(),
  },
  {
    $id: 'InvitationLinkPreview',
    additionalProperties: false,
    description: 'What an invitation link offers',
    examples: [
      {
        statusName: 'Meeting room 4',
        inviterName: 'Olivia',
        role: 'subscriber',
        expiresAt: '2030-06-08T12:00:00.000Z',
      },
    ],
  },
)
export type InvitationLinkPreview = Static<typeof InvitationLinkPreviewSchema>
