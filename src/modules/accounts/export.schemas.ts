import { Type } from 'typebox'
import { Timestamp } from '../../lib/schema.ts'
import { ProfileSchema } from './accounts.schemas.ts'

const list = (description: string) => Type.Array(Type.Unknown(), { description })

/** The export document (docs/api.md#export-your-data): its parts, each always present. */
export const ExportSchema = Type.Object(
  {
    format: Type.Literal('statusd-export/1', { description: 'The version of this shape' }),
    exportedAt: Timestamp(),
    profile: ProfileSchema,
    statuses: list(
      'The statuses you own: each as the API shows it, with `history`: every change, oldest first',
    ),
    roles: list('Your roles on statuses of others: `{statusId, role, createdAt}`'),
    invitations: Type.Object({
      received: list('Invitations to you'),
      sent: list('Invitations you made to a user'),
      links: list('Invitation links you made, without their tokens'),
    }),
    shareLinks: list('Private share links you made or on your statuses, without their tokens'),
    boards: list('Your boards'),
    channels: list('Your notification channels, without secrets or tokens'),
    rules: list('Your notification rules'),
    schedules: list('Schedules on your statuses, and those you set'),
    apiKeys: list('Your API keys: metadata only'),
    sessions: list('Your sessions: metadata only'),
    passkeys: list('Your passkeys: name and dates only'),
    securityEvents: list('Your security log'),
  },
  { description: 'Everything statusd holds about you' },
)
