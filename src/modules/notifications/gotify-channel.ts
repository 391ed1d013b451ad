import { type Static, Type } from 'typebox'
import type { FieldError } from '../../lib/errors.ts'
import type { OutboundClient } from '../../lib/outbound.ts'
import type { ChannelTypeDefinition, NotificationEvent, SendContext } from './channel-types.ts'
import { notificationText, oneLine } from './notification-message.ts'
import {
  Credential,
  endpointUrl,
  JSON_HEADERS,
  ServerUrl,
  sendToService,
  serverReachProblem,
  serverUrlProblem,
} from './service-channel.ts'

// The `gotify` channel type (docs/notifications.md#gotify): each event is a message POSTed to
// the user's Gotify server with an application token.

export const GotifyConfigSchema = Type.Object(
  {
    server: ServerUrl("Your Gotify server's address (`https://gotify.example.com`)"),
    token: Credential('An application token made in Gotify (Apps → Create application)'),
    priority: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10,
        description: "The messages' priority in Gotify, 0–10 (default 5)",
      }),
    ),
  },
  { additionalProperties: false },
)
export type GotifyConfig = Static<typeof GotifyConfigSchema>

/** Gotify's priority when the channel names none: its clients show it as a notification. */
const DEFAULT_PRIORITY = 5

/** What to POST for one event: `POST <server>/message`, the token in X-Gotify-Key. */
export function gotifyRequest(
  config: GotifyConfig,
  event: NotificationEvent,
  context: SendContext,
) {
  const text = notificationText(event, context)
  return {
    url: endpointUrl(config.server, 'message'),
    headers: { ...JSON_HEADERS, 'x-gotify-key': config.token },
    body: JSON.stringify({
      title: oneLine(text.title),
      message: text.body,
      priority: config.priority ?? DEFAULT_PRIORITY,
      // clients open the status's page when the notification is tapped
      extras: { 'client::notification': { click: { url: text.url } } },
    }),
  }
}

export const gotifyChannel = (outbound: OutboundClient): ChannelTypeDefinition<GotifyConfig> => ({
  type: 'gotify',
  configSchema: GotifyConfigSchema,
  verifiedOnCreate: true,
  credentials: ['token'],
  configProblems(config): FieldError[] {
    const problem = serverUrlProblem('config.server', config.server)
    return problem ? [problem] : []
  },
  reachProblem: (config) => serverReachProblem(outbound, 'config.server', config.server),
  defaultName: (config) => `Gotify (${URL.parse(config.server)?.hostname ?? 'server'})`,
  async send(_channel, config, event, context) {
    const { url, headers, body } = gotifyRequest(config, event, context)
    return sendToService(outbound, url, { headers, body })
  },
})
