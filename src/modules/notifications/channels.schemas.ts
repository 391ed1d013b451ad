import { Type } from 'typebox'
import { Timestamp } from '../../lib/schema.ts'
import { SingleLineText } from '../../lib/text.ts'
import { type ChannelTypes, channelTypeDefinitions } from './channel-registry.ts'

// The channels API's shapes (docs/api.md#channels). The body of a new channel is built from
// the registry: one variant per channel type, its `config` that type's schema.

export const CHANNEL_NAME_LENGTHS = { minLength: 1, maxLength: 100 } as const

const ChannelName = () => SingleLineText(CHANNEL_NAME_LENGTHS)

const EXAMPLE_CHANNEL = {
  id: 'c7Hq2mXv9LpR0sNkT4wYb',
  type: 'webhook',
  name: 'Ops alerts',
  config: { url: 'https://hooks.example.com/statusd', format: 'standard' },
  enabled: true,
  verified: true,
  failingSince: null,
  disabledReason: null,
  createdAt: '2030-01-01T12:00:00.000Z',
  updatedAt: '2030-01-01T12:00:00.000Z',
}

const channelProperties = {
  id: Type.String(),
  type: Type.String({
    description:
      'The channel type: `webhook`, `email`, `webpush`, `gotify`, `pushover`, `telegram`, `matrix` or `ntfy`',
  }),
  name: Type.String(),
  config: Type.Unknown({
    description: "The type's settings, as given, without its credentials (tokens are never shown)",
  }),
  enabled: Type.Boolean({
    description:
      'false: nothing is delivered to it (disabled by you, or by the service after 24 h of failures)',
  }),
  verified: Type.Boolean({
    description: 'false: waiting for confirmation (an e-mail address, by the link mailed to it)',
  }),
  failingSince: Type.Union([Timestamp(), Type.Null()], {
    description: 'When its current run of failed deliveries began (null: the last one succeeded)',
  }),
  disabledReason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the service disabled it (null: enabled, or disabled by you)',
  }),
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
}

export const ChannelSchema = Type.Object(channelProperties, {
  $id: 'Channel',
  description: 'A notification channel of yours, without its secret',
  examples: [EXAMPLE_CHANNEL],
})

export const NewChannelSchema = Type.Object(
  {
    ...channelProperties,
    secret: Type.Union([Type.String(), Type.Null()], {
      description:
        'The signing secret (`whsec_…`) of a `standard` webhook: shown in this answer only, never again; null for other channels',
    }),
  },
  {
    $id: 'NewChannel',
    description: 'A new channel, with its signing secret (shown once)',
    examples: [
      { ...EXAMPLE_CHANNEL, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw0xH6aJ2FV2k=' },
    ],
  },
)

/**
 * One variant per channel type in the registry, told apart by `type` (a discriminator: a
 * body is checked against its type's variant alone, so its errors are that type's).
 */
export const CreateChannelBodySchema = (types: ChannelTypes) =>
  Type.Unsafe<{ type: string; name?: string; config: unknown }>({
    type: 'object',
    properties: { type: Type.String({ description: 'The channel type' }) },
    required: ['type'],
    discriminator: { propertyName: 'type' },
    oneOf: channelTypeDefinitions(types).map((definition) =>
      Type.Object(
        {
          type: Type.Literal(definition.type),
          name: Type.Optional(ChannelName()),
          config: definition.configSchema,
        },
        { additionalProperties: false },
      ),
    ),
    examples: [
      {
        type: 'webhook',
        name: 'Ops alerts',
        config: { url: 'https://hooks.example.com/statusd', format: 'standard' },
      },
    ],
  })

export const UpdateChannelBodySchema = Type.Object(
  {
    name: Type.Optional(ChannelName()),
    enabled: Type.Optional(
      Type.Boolean({
        description: 'false disables it; true enables it again (and forgets why it was disabled)',
      }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'Any of the updatable properties; at least one (`{}` is 400 emptyBody).',
    examples: [{ enabled: true }],
  },
)

export const ChannelIdParamsSchema = Type.Object({ id: Type.String() })

export const TestEventSchema = Type.Object(
  {
    eventId: Type.String({
      description: 'The id of the `channel.test` event (the `webhook-id` a receiver sees)',
    }),
  },
  { $id: 'ChannelTestEvent', examples: [{ eventId: 'evt_Vb3kLw9QeT2yZr8XpA1sN' }] },
)

export const DeliveryAttemptSchema = Type.Object(
  {
    at: Timestamp({ description: 'When the attempt began' }),
    eventId: Type.String(),
    eventType: Type.Union([Type.String(), Type.Null()], {
      description: '`status.changed`, `status.stale`, `channel.test` or `channel.disabled`',
    }),
    statusCode: Type.Union([Type.Integer(), Type.Null()], {
      description: "The receiver's HTTP status (null: it did not answer)",
    }),
    error: Type.Union([Type.String(), Type.Null()], {
      description: 'What went wrong (null: delivered)',
    }),
    durationMs: Type.Integer({ minimum: 0 }),
  },
  {
    $id: 'DeliveryAttempt',
    description: 'One attempt to deliver an event to the channel',
    examples: [
      {
        at: '2030-01-01T12:00:00.000Z',
        eventId: 'evt_Vb3kLw9QeT2yZr8XpA1sN',
        eventType: 'status.changed',
        statusCode: 500,
        error: 'HTTP 500',
        durationMs: 84,
      },
    ],
  },
)
