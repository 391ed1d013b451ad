import type { Selectable } from 'kysely'
import type { TSchema } from 'typebox'
import type { ChannelsTable } from '../../db/database.ts'
import type { FieldError } from '../../lib/errors.ts'
import type { NotifiedStatus } from '../outbox/outbox.service.ts'

// The contract every channel type fulfils (docs/notifications.md#channels): the worker hands
// an event to the type of the channel it is for, and learns whether to retry.

export type ChannelRow = Selectable<ChannelsTable>

// note: the Status as a notification carries it is defined below statuses, where the write
// that records it lives (outbox.service.ts)
export type { NotifiedStatus }

/** One event on its way to one channel: the same `id` on every attempt. */
export interface NotificationEvent {
  /** `status.changed`, `status.stale`, `channel.test`, `channel.disabled`. */
  type: string
  /** Stable across retries: receivers de-duplicate by it. */
  id: string
  /** When the change happened (RFC 3339). */
  at: string
  status?: NotifiedStatus
  /** Free text for notices that concern no status (`channel.test`, `channel.disabled`). */
  message?: string
  /** The channel a `channel.test` or `channel.disabled` notice is about, by its name. */
  channelName?: string
}

/** The outcome of a failed attempt. */
export class DeliveryError extends Error {
  /** false: retrying cannot help (e.g. a push subscription that is gone: 404/410). */
  readonly retryable: boolean
  /** The receiver's HTTP status, when it answered. */
  readonly statusCode: number | undefined

  constructor(message: string, retryable: boolean, statusCode?: number) {
    super(message)
    this.name = 'DeliveryError'
    this.retryable = retryable
    this.statusCode = statusCode
  }
}

/** What a channel type needs from the service to send. */
export interface SendContext {
  /** The service's public origin, for links in messages. */
  publicUrl: string
  /** The recipient's language (the channel owner's `locale`, docs/languages.md); none: English. */
  locale?: string | null
}

/** One channel type: how its settings are validated and how it sends. */
export interface ChannelTypeDefinition<Config = unknown> {
  /** Its name in the API (`webhook`, `email`…): the key it has in channel-registry.ts. */
  type: string
  /** The TypeBox schema of `config` in `POST /v1/user/channels` (validated by the route). */
  configSchema: TSchema
  /**
   * Whether a new channel may be used at once (webhook, push) or only once confirmed
   * (e-mail: by the link mailed to it; `verified_at` stays null until then).
   */
  verifiedOnCreate: boolean
  /**
   * Runs before the channel is stored, with its validated config: throws an ApiError to
   * refuse it (nothing is stored), e.g. 501 `emailUnavailable` without SMTP, 429 for too many
   * confirmation mails, 400 for a push subscription whose keys are not keys.
   */
  beforeCreate?(input: { userId: string; config: Config }): Promise<void>
  /**
   * What the schema cannot say about a valid `config` (e.g. a URL that does not parse): each
   * problem a field error (`config.url`), answered as 400 validationError.
   */
  configProblems?(config: Config): FieldError[]
  /**
   * Why the channel's receiver would be refused now (a webhook to an address the outbound
   * guard refuses): a field error, answered before the channel is made (400) and before a
   * test is recorded (409); null when nothing is known against it.
   */
  reachProblem?(config: Config): Promise<FieldError | null>
  /**
   * The properties of `config` that are credentials (an API token, an access token): stored
   * apart, in `channels.secret`, and never in an answer (docs/notifications.md#channels);
   * `send` gets the config with them again (configForSend).
   */
  credentials?: readonly string[]
  /** The name of a channel created without one (default: the type). */
  defaultName?(config: Config): string
  /**
   * A signing secret to make for a new channel, stored in `channels.secret` and shown once in
   * the creation's answer (standard webhooks: `whsec_…`); null or absent: none.
   */
  newSecret?(config: Config): string | null
  /**
   * Runs after the channel was stored (e.g. mails the confirmation link); a failure here is
   * reported to the caller but does not undo the channel.
   */
  afterCreate?(channel: ChannelRow, config: Config, context: SendContext): Promise<void>
  /**
   * Sends one event. Resolves with the receiver's HTTP status when it answered 2xx; throws
   * DeliveryError otherwise (any other error counts as retryable).
   */
  send(
    channel: ChannelRow,
    config: Config,
    event: NotificationEvent,
    context: SendContext,
  ): Promise<{ statusCode?: number }>
}

/**
 * A new channel's config split in two: what is stored (and shown) as its config, and its
 * credentials (the type's `credentials` properties) as the JSON stored in `channels.secret`;
 * null when the type has none.
 */
export function withoutCredentials(
  definition: Pick<ChannelTypeDefinition, 'credentials'>,
  config: unknown,
): { config: unknown; credentials: string | null } {
  const names = definition.credentials ?? []
  if (names.length === 0 || typeof config !== 'object' || config === null)
    return { config, credentials: null }
  const shown: Record<string, unknown> = {}
  const hidden: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(config))
    (names.includes(name) ? hidden : shown)[name] = value
  return { config: shown, credentials: JSON.stringify(hidden) }
}

/** The config a channel's type sends with: its stored config and, back in it, its credentials. */
export function configForSend(
  definition: Pick<ChannelTypeDefinition, 'credentials'>,
  channel: Pick<ChannelRow, 'config' | 'secret'>,
): unknown {
  const config: unknown = JSON.parse(channel.config)
  if ((definition.credentials ?? []).length === 0 || channel.secret === null) return config
  return { ...(config as object), ...(JSON.parse(channel.secret) as object) }
}
