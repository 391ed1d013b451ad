import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { type Writer, writerOf } from '../../db/writer.ts'
import type { Clock } from '../../lib/clock.ts'
import { ApiError, conflict, emptyBody, notFound, validationError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { recordOutboxEvent } from '../outbox/outbox.service.ts'
import { type ChannelTypes, channelTypeOf } from './channel-registry.ts'
import { type SendContext, withoutCredentials } from './channel-types.ts'
import {
  type AttemptRow,
  type ChannelRow,
  countUserChannels,
  deleteUserChannel,
  findUserChannel,
  insertChannel,
  listChannelAttempts,
  listUserChannels,
  updateUserChannel,
} from './channels.repository.ts'

// A user's notification channels (docs/notifications.md#channels): where they are told.

/** Channels one user may have (docs/notifications.md#channels). */
export const MAX_CHANNELS_PER_USER = 20
/** Attempts the delivery log shows (and keeps) per channel. */
export const DELIVERY_LOG_LENGTH = 100

export interface ChannelDeps {
  db: Kysely<DB>
  writer?: Writer
  clock: Clock
  /** The channel types offered (channel-registry.ts). */
  types: ChannelTypes
  /** What a channel type gets to act after a channel is made (links, the HTTP client). */
  sendContext: () => SendContext
  /** Told when an event was recorded (the worker looks at once, not at its next poll). */
  onEvent?: () => void
}

/** A channel as the API shows it: never its secret. */
export interface ChannelView {
  id: string
  type: string
  name: string
  config: unknown
  enabled: boolean
  verified: boolean
  failingSince: string | null
  disabledReason: string | null
  createdAt: string
  updatedAt: string
}

export interface DeliveryAttemptView {
  at: string
  eventId: string
  eventType: string | null
  statusCode: number | null
  error: string | null
  durationMs: number
}

export const toChannelView = (row: ChannelRow): ChannelView => ({
  id: row.id,
  type: row.type,
  name: row.name,
  config: JSON.parse(row.config),
  enabled: row.enabled === 1,
  verified: row.verified_at !== null,
  failingSince: row.failing_since,
  disabledReason: row.disabled_reason,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
})

const toAttemptView = (row: AttemptRow): DeliveryAttemptView => ({
  at: row.at,
  eventId: row.event_id,
  eventType: row.event_type,
  statusCode: row.status_code,
  error: row.error,
  durationMs: row.duration_ms,
})

const iso = (clock: Clock) => new Date(clock.now()).toISOString()
const channelsLock = (userId: string) => `channels:${userId}`
const channelNotFound = () => notFound('Channel not found')

/** GET /v1/user/channels: the user's channels, oldest first. */
export async function channelsOf(deps: ChannelDeps, userId: string): Promise<ChannelView[]> {
  return (await listUserChannels(deps.db, userId)).map(toChannelView)
}

/** GET /v1/user/channels/:id */
export async function channelOf(
  deps: ChannelDeps,
  userId: string,
  id: string,
): Promise<ChannelView> {
  const row = await findUserChannel(deps.db, userId, id)
  if (!row) throw channelNotFound()
  return toChannelView(row)
}

/**
 * POST /v1/user/channels: makes a channel of a type the registry offers, `config` already
 * valid against the type's schema. The signing secret, if the type makes one, is in this
 * answer only.
 */
export async function createChannel(
  deps: ChannelDeps,
  userId: string,
  input: { type: string; name?: string; config: unknown },
): Promise<ChannelView & { secret: string | null }> {
  const definition = channelTypeOf(deps.types, input.type)
  if (!definition)
    throw validationError([{ field: 'type', message: 'is not a channel type this service offers' }])
  const problems = definition.configProblems?.(input.config) ?? []
  if (problems.length > 0) throw validationError(problems)
  // said now, not first in the delivery log (docs/notifications.md#outbound-safety)
  const unreachable = await definition.reachProblem?.(input.config)
  if (unreachable)
    throw validationError([unreachable], 'The URL is refused: statusd does not call this address')
  await definition.beforeCreate?.({ userId, config: input.config })
  const now = iso(deps.clock)
  // credentials (an API token) are kept apart from the config the API shows
  const stored = withoutCredentials(definition, input.config)
  const newSecret = definition.newSecret?.(input.config) ?? null
  const row: ChannelRow = {
    id: newId(),
    user_id: userId,
    type: definition.type,
    name: input.name ?? definition.defaultName?.(input.config) ?? definition.type,
    config: JSON.stringify(stored.config),
    secret: newSecret ?? stored.credentials,
    enabled: 1,
    verified_at: definition.verifiedOnCreate ? now : null,
    failing_since: null,
    disabled_reason: null,
    created_at: now,
    updated_at: now,
  }
  await writerOf(deps).run(async (tx) => {
    // the count and the insert in one turn per user, on every instance (PostgreSQL)
    await lockForTransaction(tx, channelsLock(userId))
    if ((await countUserChannels(tx, userId)) >= MAX_CHANNELS_PER_USER)
      throw conflict(
        `You have ${MAX_CHANNELS_PER_USER} channels, the most allowed; delete one first`,
      )
    await insertChannel(tx, row)
  })
  await definition.afterCreate?.(row, input.config, deps.sendContext())
  // note: read again, for what afterCreate did (an e-mail channel to the account's own
  // confirmed address is confirmed at once)
  const made = (await findUserChannel(deps.db, userId, row.id)) ?? row
  return { ...toChannelView(made), secret: newSecret }
}

/**
 * PATCH /v1/user/channels/:id: renames, disables or enables it. Enabling a channel the
 * service disabled clears why, and its failing streak starts afresh.
 */
export async function updateChannel(
  deps: ChannelDeps,
  userId: string,
  id: string,
  changes: { name?: string; enabled?: boolean },
): Promise<ChannelView> {
  if (changes.name === undefined && changes.enabled === undefined) throw emptyBody()
  return writerOf(deps).run(async (tx) => {
    const updated = await updateUserChannel(tx, userId, id, {
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.enabled === true && { enabled: 1, failing_since: null, disabled_reason: null }),
      ...(changes.enabled === false && { enabled: 0, disabled_reason: null }),
      updated_at: iso(deps.clock),
    })
    if (!updated) throw channelNotFound()
    return toChannelView((await findUserChannel(tx, userId, id)) as ChannelRow)
  })
}

/** DELETE /v1/user/channels/:id: the channel, its pending deliveries and its log. */
export async function deleteChannel(deps: ChannelDeps, userId: string, id: string): Promise<void> {
  const deleted = await writerOf(deps).run((tx) => deleteUserChannel(tx, userId, id))
  if (!deleted) throw channelNotFound()
}

/**
 * POST /v1/user/channels/:id/test: records a `channel.test` event for this one channel, which
 * the worker delivers like any other (a disabled channel too: the way to check it works again
 * before enabling it). Returns the event's id.
 */
export async function testChannel(
  deps: ChannelDeps,
  userId: string,
  id: string,
): Promise<{ eventId: string }> {
  // a receiver the guard refuses is said here rather than only in the delivery log
  const found = await findUserChannel(deps.db, userId, id)
  if (!found) throw channelNotFound()
  const definition = channelTypeOf(deps.types, found.type)
  const unreachable = await definition?.reachProblem?.(JSON.parse(found.config))
  if (unreachable) throw conflict(unreachable.message)
  const eventId = await writerOf(deps).run(async (tx) => {
    const channel = await findUserChannel(tx, userId, id)
    if (!channel) throw channelNotFound()
    if (channel.verified_at === null)
      throw new ApiError(
        409,
        'conflict',
        'This channel is not confirmed yet: follow the link sent to it first',
      )
    const at = iso(deps.clock)
    return recordOutboxEvent(tx, {
      type: 'channel.test',
      userId,
      channelId: id,
      payload: {
        message: `A test of your channel "${channel.name}" from statusd`,
        channelName: channel.name,
        at,
      },
      at,
    })
  })
  deps.onEvent?.()
  return { eventId }
}

/** GET /v1/user/channels/:id/deliveries: the last attempts, newest first. */
export async function channelDeliveries(
  deps: ChannelDeps,
  userId: string,
  id: string,
): Promise<DeliveryAttemptView[]> {
  const channel = await findUserChannel(deps.db, userId, id)
  if (!channel) throw channelNotFound()
  return (await listChannelAttempts(deps.db, id, DELIVERY_LOG_LENGTH)).map(toAttemptView)
}
