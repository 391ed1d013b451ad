import type { Static } from 'typebox'
import { Type } from 'typebox'
import { StringEnum } from '../../lib/schema.ts'

export const GRANTABLE_ROLES = ['updater', 'subscriber'] as const
export const ROLES = ['owner', ...GRANTABLE_ROLES] as const

/** Body of `PUT /v1/status/:statusId/users/:userId`. */
export const GrantBodySchema = Type.Object(
  { role: StringEnum(GRANTABLE_ROLES, { description: 'The role to grant (replaces any other)' }) },
  { additionalProperties: false, examples: [{ role: 'updater' }] },
)

export const StatusUserParamsSchema = Type.Object({
  statusId: Type.String(),
  userId: Type.String(),
})

/** An entry of a status's user list (docs/sharing.md#roles). */
export const StatusUserSchema = Type.Object(
  {
    userId: Type.String(),
    name: Type.String(),
    role: StringEnum(ROLES),
  },
  {
    $id: 'StatusUser',
    additionalProperties: false,
    description: 'Someone with a role on a status',
  },
)
export type StatusUser = Static<typeof StatusUserSchema>

/** An entry of `GET /v1/user/subscriptions`: the list entry shape plus the caller's role. */
export const SubscriptionSchema = Type.Object(
  {
    statusId: Type.String(),
    statusKey: Type.Union([Type.String(), Type.Null()]),
    shareId: Type.String(),
    name: Type.String(),
    role: StringEnum(GRANTABLE_ROLES),
  },
  {
    $id: 'Subscription',
    additionalProperties: false,
    description: 'A status you have a role on but do not own',
  },
)
export type Subscription = Static<typeof SubscriptionSchema>

export const ShareIdParamsSchema = Type.Object({ shareId: Type.String() })
