import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Mailer } from '../../lib/mailer.ts'
import type { OutboundClient } from '../../lib/outbound.ts'
import type { ChannelTypeDefinition } from './channel-types.ts'
import { emailChannelType } from './email-channel.ts'
import { gotifyChannel } from './gotify-channel.ts'
import { matrixChannel } from './matrix-channel.ts'
import { ntfyChannel } from './ntfy-channel.ts'
import { pushoverChannel } from './pushover-channel.ts'
import { telegramChannel } from './telegram-channel.ts'
import type { VapidKeys } from './vapid-keys.ts'
import { webhookChannel } from './webhook-channel.ts'
import { outboundPushTransport, webpushChannelType } from './webpush-channel.ts'

// Every channel type the service offers (docs/notifications.md#channels), by type: the routes
// build the body schema of `POST /v1/user/channels` from it and the worker sends through it.
// A new type is one line in makeChannelTypes and one file that defines it.

// biome-ignore lint/suspicious/noExplicitAny: each entry has its own config type; the route validates config against the entry's schema before the entry sees it
export type AnyChannelType = ChannelTypeDefinition<any>

/** The channel types offered, by type. */
export type ChannelTypes = { readonly [type: string]: AnyChannelType | undefined }

/** What the channel types are made with (notifications.plugin.ts gives it; tests may give their own). */
export interface ChannelTypeDeps {
  db: Kysely<DB>
  clock: Clock
  /** null: no SMTP_URL. */
  mailer: Mailer | null
  /** The guarded HTTP client (docs/notifications.md#outbound-safety). */
  outbound: OutboundClient
  /** The service's VAPID key pair (docs/notifications.md#browser-push). */
  vapid: VapidKeys
  /** The VAPID `sub` claim push services see (vapidSubject). */
  vapidSubject: string
  /**
   * Other addresses for the services at fixed hosts (Pushover, Telegram): only tests give
   * them, to reach a local receiver, which the outbound guard judges as any other address.
   */
  serviceUrls?: ServiceUrls
}

/** The base URLs of the services at fixed hosts, for tests (ChannelTypeDeps.serviceUrls). */
export interface ServiceUrls {
  pushover?: string
  telegram?: string
}

/** Every channel type the service offers, made with what they need. */
export function makeChannelTypes(deps: ChannelTypeDeps): ChannelTypes {
  return {
    webhook: webhookChannel(deps.outbound),
    email: emailChannelType({ db: deps.db, mailer: deps.mailer, clock: deps.clock }),
    webpush: webpushChannelType({
      db: deps.db,
      keys: deps.vapid,
      subject: deps.vapidSubject,
      transport: outboundPushTransport(deps.outbound),
      clock: deps.clock,
    }),
    gotify: gotifyChannel(deps.outbound),
    pushover: pushoverChannel(deps.outbound, deps.serviceUrls?.pushover),
    telegram: telegramChannel(deps.outbound, deps.serviceUrls?.telegram),
    matrix: matrixChannel(deps.outbound),
    ntfy: ntfyChannel(deps.outbound),
  }
}

/** The definition of a type, or undefined for one the service does not offer. */
export const channelTypeOf = (types: ChannelTypes, type: string): AnyChannelType | undefined =>
  Object.hasOwn(types, type) ? types[type] : undefined

/** Every type offered, in registry order. */
export const channelTypeDefinitions = (types: ChannelTypes): AnyChannelType[] =>
  Object.values(types).filter((d): d is AnyChannelType => d !== undefined)
