import type { ChannelType, ChannelTypeDefinition } from './channel-types.ts'
import { webhookChannel } from './webhook-channel.ts'

// Every channel type the service offers (docs/notifications.md#channels), by type: the routes
// build the body schema of `POST /v1/user/channels` from it and the worker sends through it.
// A new type is one line here and one file that defines it.

// biome-ignore lint/suspicious/noExplicitAny: each entry has its own config type; the route validates config against the entry's schema before the entry sees it
type AnyChannelType = ChannelTypeDefinition<any>

export const CHANNEL_TYPES: { readonly [T in ChannelType]?: AnyChannelType } = {
  webhook: webhookChannel,
}

/** The definition of a type, or undefined for one the service does not offer. */
export const channelTypeOf = (type: string): AnyChannelType | undefined =>
  Object.hasOwn(CHANNEL_TYPES, type) ? CHANNEL_TYPES[type as ChannelType] : undefined

/** Every type offered, in registry order. */
export const channelTypeDefinitions = (): AnyChannelType[] =>
  Object.values(CHANNEL_TYPES).filter((d): d is AnyChannelType => d !== undefined)
