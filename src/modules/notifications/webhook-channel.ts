import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { type Static, Type } from 'typebox'
import type { FieldError } from '../../lib/errors.ts'
import { type OutboundClient, OutboundError } from '../../lib/outbound.ts'
import { StringEnum } from '../../lib/schema.ts'
import {
  type ChannelRow,
  type ChannelTypeDefinition,
  DeliveryError,
  type NotificationEvent,
  type SendContext,
} from './channel-types.ts'

// The `webhook` channel type (docs/notifications.md#channels): an HTTP POST per event, in the
// body the receiver expects: `standard` (signed, Standard Webhooks), or the incoming-webhook
// formats of Slack, Discord and ntfy.

export const WEBHOOK_FORMATS = ['standard', 'slack', 'discord', 'ntfy'] as const

/** The longest URL a webhook may have. */
export const MAX_WEBHOOK_URL_LENGTH = 2048

export const WebhookConfigSchema = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
      description: 'Where events are POSTed: an http(s) URL of at most 2 048 characters',
    }),
    format: StringEnum(WEBHOOK_FORMATS, {
      description:
        'The body sent: `standard` (JSON, signed per Standard Webhooks), `slack` (`{text}`), `discord` (`{content}`) or `ntfy` (ntfy JSON publishing)',
    }),
  },
  { additionalProperties: false },
)
export type WebhookConfig = Static<typeof WebhookConfigSchema>

/** A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`

/** The `standard` body (docs/notifications.md#payloads): the event as it is. */
export function standardBody(event: NotificationEvent): string {
  return JSON.stringify({
    type: event.type,
    id: event.id,
    at: event.at,
    ...(event.status && { status: event.status }),
    ...(event.message !== undefined && { message: event.message }),
  })
}

/** The event in one line of text, for chat services and ntfy. */
export function eventTitle(event: NotificationEvent): string {
  const status = event.status
  if (!status) return event.message ?? event.type
  if (event.type === 'status.stale') return `${status.name} is stale`
  const from = status.previousValue ?? '—'
  const to = status.value ?? '—'
  return `${status.name}: ${from} → ${to}`
}

/** The event as text: its title, and the status page's address when there is one. */
const eventText = (event: NotificationEvent): string =>
  event.status ? `${eventTitle(event)}\n${event.status.url}` : eventTitle(event)

const NTFY_TAGS: Record<string, string> = {
  'status.changed': 'bell',
  'status.stale': 'hourglass',
  'channel.test': 'white_check_mark',
  'channel.disabled': 'warning',
}

/**
 * ntfy's JSON publishing: the channel's URL is the topic's (`https://ntfy.sh/mytopic`); the
 * JSON goes to the server's root with the topic in the body, which keeps any status name
 * (headers would need RFC 2047 for non-ASCII text).
 */
export function ntfyRequest(url: string, event: NotificationEvent): { url: string; body: string } {
  const parsed = new URL(url)
  const segments = parsed.pathname.split('/')
  const topic = decodeURIComponent(segments.pop() ?? '')
  parsed.pathname = `${segments.join('/')}/`
  return {
    url: parsed.href,
    body: JSON.stringify({
      topic,
      title: eventTitle(event),
      message: event.status
        ? `${event.status.name}: ${event.status.value ?? '—'}`
        : (event.message ?? event.type),
      tags: [NTFY_TAGS[event.type] ?? 'bell'],
      ...(event.status && { click: event.status.url }),
    }),
  }
}

/** What to POST for one event: URL, headers and body by format. */
export function webhookRequest(
  channel: Pick<ChannelRow, 'secret'>,
  config: WebhookConfig,
  event: NotificationEvent,
  now: Date,
): { url: string; headers: Record<string, string>; body: string } {
  const json = { 'content-type': 'application/json', 'user-agent': 'statusd-webhooks' }
  switch (config.format) {
    case 'standard': {
      const body = standardBody(event)
      if (!channel.secret) throw new DeliveryError('the channel has no signing secret', false)
      // note: the event id is the webhook-id, the same on every attempt, so receivers
      // de-duplicate by it; the timestamp is the attempt's own (the signature covers both)
      const signature = new Webhook(channel.secret).sign(event.id, now, body)
      return {
        url: config.url,
        headers: {
          ...json,
          'webhook-id': event.id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
      }
    }
    case 'slack':
      return { url: config.url, headers: json, body: JSON.stringify({ text: eventText(event) }) }
    case 'discord':
      return {
        url: config.url,
        headers: json,
        // note: Discord caps content at 2 000 characters
        body: JSON.stringify({ content: eventText(event).slice(0, 2000) }),
      }
    case 'ntfy': {
      const { url, body } = ntfyRequest(config.url, event)
      return { url, headers: json, body }
    }
  }
}

/**
 * What a user is told of a webhook URL the outbound guard refuses, and what the operator can
 * do about it (docs/notifications.md#outbound-safety).
 */
export const unreachableMessage = (refusal: string): string =>
  `statusd will not call this address: ${refusal}. Webhooks reach only public addresses, unless the operator allows the network in WEBHOOK_ALLOW_NETWORKS`

/**
 * The `webhook` channel type; every request goes through `outbound`, the guarded client
 * (docs/notifications.md#outbound-safety).
 */
export const webhookChannel = (outbound: OutboundClient): ChannelTypeDefinition<WebhookConfig> => ({
  type: 'webhook',
  configSchema: WebhookConfigSchema,
  verifiedOnCreate: true,
  configProblems(config): FieldError[] {
    const url = URL.parse(config.url)
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
      return [{ field: 'config.url', message: 'must be an absolute http or https URL' }]
    if (url.username !== '' || url.password !== '')
      return [{ field: 'config.url', message: 'must not hold a user name or password' }]
    if (config.format === 'ntfy' && !/[^/]$/.test(url.pathname))
      return [{ field: 'config.url', message: "must be the topic's URL (https://ntfy.sh/mytopic)" }]
    return []
  },
  async reachProblem(config) {
    // note: ntfy's JSON goes to the server's root; the host, and so the address, is the same
    const refusal = await outbound.refusalOf(config.url)
    return refusal === null ? null : { field: 'config.url', message: unreachableMessage(refusal) }
  },
  defaultName: (config) => `${URL.parse(config.url)?.hostname ?? 'webhook'} (${config.format})`,
  newSecret: (config) => (config.format === 'standard' ? newWebhookSecret() : null),
  async send(channel, config, event, _context: SendContext) {
    // note: the real time, not the worker's clock: receivers check the timestamp against
    // theirs (Standard Webhooks allows 5 minutes) to refuse replays
    const { url, headers, body } = webhookRequest(channel, config, event, new Date())
    try {
      const answer = await outbound.post(url, { headers, body })
      return { statusCode: answer.statusCode }
    } catch (err) {
      if (err instanceof OutboundError)
        // a refused address stays refused: retrying cannot help
        throw new DeliveryError(err.message, !err.refused, err.statusCode)
      throw err
    }
  },
})
