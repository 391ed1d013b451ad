import { type Static, Type } from 'typebox'
import type { OutboundClient } from '../../lib/outbound.ts'
import type { ChannelTypeDefinition, NotificationEvent, SendContext } from './channel-types.ts'
import { notificationLinkText, notificationText, oneLine } from './notification-message.ts'
import { Credential, endpointUrl, JSON_HEADERS, sendToService } from './service-channel.ts'

// The `pushover` channel type (docs/notifications.md#pushover): each event is a message
// POSTed to Pushover's API with the user's application token and user key.

/** Pushover's API; only tests name another (a local receiver: ChannelTypeDeps.serviceUrls). */
export const PUSHOVER_API = 'https://api.pushover.net'

/** Pushover's keys and tokens: 30 letters and digits. */
const PUSHOVER_KEY = '^[A-Za-z0-9]{30}$'

export const PushoverConfigSchema = Type.Object(
  {
    user: Credential('Your user key (or a group key), shown on your Pushover dashboard', {
      pattern: PUSHOVER_KEY,
      patternMessage: 'must be 30 letters and digits',
    }),
    token: Credential('The API token of an application you registered at Pushover', {
      pattern: PUSHOVER_KEY,
      patternMessage: 'must be 30 letters and digits',
    }),
    device: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_-]{1,25}$',
        description: 'Only this device of yours (its name in Pushover); default: all of them',
      }),
    ),
  },
  { additionalProperties: false },
)
export type PushoverConfig = Static<typeof PushoverConfigSchema>

/** Pushover's limits: a title of 250 characters, a message of 1 024. */
const MAX_TITLE = 250
const MAX_MESSAGE = 1024

/** What to POST for one event: `POST /1/messages.json`, JSON with token, user and message. */
export function pushoverRequest(
  config: PushoverConfig,
  event: NotificationEvent,
  context: SendContext,
  api = PUSHOVER_API,
) {
  const text = notificationText(event, context)
  return {
    url: endpointUrl(api, '1/messages.json'),
    headers: { ...JSON_HEADERS },
    body: JSON.stringify({
      token: config.token,
      user: config.user,
      ...(config.device !== undefined && { device: config.device }),
      title: oneLine(text.title).slice(0, MAX_TITLE),
      message: text.body.slice(0, MAX_MESSAGE),
      url: text.url,
      url_title: notificationLinkText(event, context).slice(0, 100),
    }),
  }
}

export const pushoverChannel = (
  outbound: OutboundClient,
  api = PUSHOVER_API,
): ChannelTypeDefinition<PushoverConfig> => ({
  type: 'pushover',
  configSchema: PushoverConfigSchema,
  verifiedOnCreate: true,
  credentials: ['user', 'token'],
  defaultName: (config) => (config.device ? `Pushover (${config.device})` : 'Pushover'),
  async send(_channel, config, event, context) {
    const { url, headers, body } = pushoverRequest(config, event, context, api)
    return sendToService(outbound, url, { headers, body })
  },
})
