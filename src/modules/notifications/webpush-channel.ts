import { createECDH } from 'node:crypto'
import ipaddr from 'ipaddr.js'
import type { Kysely } from 'kysely'
import { type Static, Type } from 'typebox'
import type { DB } from '../../db/database.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import { validationError } from '../../lib/errors.ts'
import { type OutboundClient, OutboundError } from '../../lib/outbound.ts'
import { disableChannelFor } from './channel-marks.repository.ts'
import {
  type ChannelTypeDefinition,
  DeliveryError,
  type NotificationEvent,
  type SendContext,
} from './channel-types.ts'
import { notificationText, oneLine } from './notification-message.ts'
import type { VapidKeys } from './vapid-keys.ts'

// The browser-push channel (docs/notifications.md#browser-push): the app subscribes a
// browser with the service's VAPID public key (`GET /v1/webpush/key`) and stores the
// subscription as a channel; each event is encrypted for that browser (RFC 8291, aes128gcm)
// and posted to its push service, which wakes the app's service worker with it.

const BASE64URL = '^[A-Za-z0-9_-]+={0,2}$'

export const PushSubscriptionSchema = Type.Object(
  {
    endpoint: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: "The push service's URL for this browser (https)",
    }),
    expirationTime: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], {
        description: 'As the browser gives it (`PushSubscription.toJSON()`); not used',
      }),
    ),
    keys: Type.Object(
      {
        p256dh: Type.String({
          pattern: BASE64URL,
          maxLength: 100,
          description: "The browser's P-256 public key, base64url (65 bytes)",
        }),
        auth: Type.String({
          pattern: BASE64URL,
          maxLength: 40,
          description: 'The authentication secret, base64url (16 bytes)',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)

export const WebpushChannelConfigSchema = Type.Object(
  {
    subscription: Type.Unsafe<Static<typeof PushSubscriptionSchema>>({
      ...PushSubscriptionSchema,
      description: "The browser's `PushSubscription.toJSON()`, as it is",
    }),
  },
  { additionalProperties: false },
)
export type WebpushChannelConfig = Static<typeof WebpushChannelConfigSchema>

/** What one push request is: the push service's URL and the encrypted, signed request. */
export interface PushRequest {
  endpoint: string
  headers: Record<string, string>
  body: Buffer
}

/** Sends a push request; resolves with the push service's HTTP status (any). */
export type PushTransport = (request: PushRequest) => Promise<{ statusCode: number }>

/**
 * Push requests through the guarded client (docs/notifications.md#outbound-safety): an
 * endpoint is an address a browser named, so it obeys the rules every webhook does. Any
 * answer resolves with its status; a refused address or a failed connection rejects.
 */
export const outboundPushTransport =
  (outbound: OutboundClient): PushTransport =>
  async ({ endpoint, headers, body }) => {
    try {
      return { statusCode: (await outbound.post(endpoint, { headers, body })).statusCode }
    } catch (err) {
      if (err instanceof OutboundError && err.statusCode !== undefined)
        return { statusCode: err.statusCode }
      // a refused address stays refused; a failed connection may pass
      if (err instanceof OutboundError) throw new DeliveryError(err.message, !err.refused)
      throw err
    }
  }

export interface WebpushChannelDeps {
  db: Kysely<DB>
  keys: VapidKeys
  /** The VAPID `sub` claim (vapidSubject). */
  subject: string
  /** How the request goes out: through the outbound guard (docs/notifications.md#outbound-safety). */
  transport: PushTransport
  clock?: Clock
}

/** How long a push service keeps a notice for a browser that is offline: a day, then it is old news. */
export const PUSH_TTL_SECONDS = 24 * 60 * 60

/** The JSON the app's service worker shows (docs/notifications.md#browser-push). */
export interface PushPayload {
  type: string
  id: string
  title: string
  body: string
  url: string
  /** Replaces an earlier notice with the same tag: one per status on screen. */
  tag: string
}

/** A push message is at most 4 KiB once encrypted; the texts here stay far below. */
const MAX_BODY = 1000

/** The payload an event makes. */
export function pushPayload(event: NotificationEvent, context: SendContext): PushPayload {
  const text = notificationText(event, context)
  return {
    type: event.type,
    id: event.id,
    title: oneLine(text.title).slice(0, 200),
    body: text.body.slice(0, MAX_BODY),
    url: text.url,
    tag: event.status?.id ?? event.type,
  }
}

const decoded = (base64url: string): Buffer => Buffer.from(base64url, 'base64url')

/**
 * Whether `host` (a URL's hostname) is an IP address outside the public internet (loopback,
 * private, link-local, …): a push service on the local network, which the outbound guard
 * reaches only where WEBHOOK_ALLOW_NETWORKS allows.
 */
function onLocalNetwork(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '')
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() !== 'unicast'
}

/** What is wrong with a subscription (field, message), if anything. */
export function subscriptionProblems(
  subscription: WebpushChannelConfig['subscription'],
): { field: string; message: string }[] {
  const problems: { field: string; message: string }[] = []
  const url = URL.parse(subscription.endpoint)
  if (!url || !['https:', 'http:'].includes(url.protocol))
    problems.push({ field: 'config.subscription.endpoint', message: 'must be an https URL' })
  else if (url.protocol === 'http:' && !onLocalNetwork(url.hostname))
    problems.push({
      field: 'config.subscription.endpoint',
      message: 'must be an https URL (plain http only to an IP address on the local network)',
    })
  else if (url.username !== '' || url.password !== '')
    problems.push({ field: 'config.subscription.endpoint', message: 'must hold no credentials' })
  const p256dh = decoded(subscription.keys.p256dh)
  let onCurve = p256dh.length === 65 && p256dh[0] === 4
  if (onCurve)
    try {
      // the key must be a point of P-256, or no message could ever be encrypted for it
      const ecdh = createECDH('prime256v1')
      ecdh.generateKeys()
      ecdh.computeSecret(p256dh)
    } catch {
      onCurve = false
    }
  if (!onCurve)
    problems.push({
      field: 'config.subscription.keys.p256dh',
      message: 'must be an uncompressed P-256 public key (65 bytes, base64url)',
    })
  if (decoded(subscription.keys.auth).length !== 16)
    problems.push({
      field: 'config.subscription.keys.auth',
      message: 'must be a 16-byte secret, base64url',
    })
  return problems
}

/** The browser-push channel type, for the channel registry. */
export function webpushChannelType(
  deps: WebpushChannelDeps,
): ChannelTypeDefinition<WebpushChannelConfig> {
  const clock = deps.clock ?? systemClock
  return {
    type: 'webpush',
    configSchema: WebpushChannelConfigSchema,
    verifiedOnCreate: true,
    defaultName: (config) =>
      `Browser (${URL.parse(config.subscription.endpoint)?.hostname ?? 'push'})`,

    async beforeCreate({ config }) {
      const problems = subscriptionProblems(config.subscription)
      if (problems.length > 0) throw validationError(problems)
    },

    async send(channel, config, event, context) {
      const vapid = await deps.keys.get()
      // note: loaded at the first push, not at start (docs/performance.md#cold-start-and-memory)
      const { default: webpush } = await import('web-push')
      const details = webpush.generateRequestDetails(
        config.subscription,
        JSON.stringify(pushPayload(event, context)),
        {
          TTL: PUSH_TTL_SECONDS,
          urgency: 'normal',
          vapidDetails: { subject: deps.subject, ...vapid },
        },
      )
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(details.headers)) headers[name] = String(value)
      const { statusCode } = await deps.transport({
        endpoint: details.endpoint,
        headers,
        body: details.body ?? Buffer.alloc(0),
      })
      if (statusCode >= 200 && statusCode < 300) return { statusCode }
      if (statusCode === 404 || statusCode === 410) {
        // the browser unsubscribed or the subscription expired: it never comes back
        await disableChannelFor(
          deps.db,
          channel.id,
          'The browser ended this push subscription; subscribe again in the app.',
          new Date(clock.now()).toISOString(),
        )
        throw new DeliveryError(`the push subscription is gone (${statusCode})`, false, statusCode)
      }
      // 429 and 5xx may pass; any other refusal (400, 403 a key mismatch, 413) will not
      const retryable = statusCode === 429 || statusCode >= 500
      throw new DeliveryError(`the push service answered ${statusCode}`, retryable, statusCode)
    },
  }
}
