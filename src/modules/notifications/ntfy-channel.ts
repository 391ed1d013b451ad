import { type Static, Type } from 'typebox'
import type { FieldError } from '../../lib/errors.ts'
import type { OutboundClient } from '../../lib/outbound.ts'
import { withPatternMessage } from '../../lib/schema.ts'
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

// The `ntfy` channel type (docs/notifications.md#ntfy): each event is published to a topic
// on ntfy.sh or the user's own ntfy server, as JSON (which keeps any status name: headers
// would need RFC 2047 for non-ASCII text), with an access token for a protected topic.

export const NtfyConfigSchema = Type.Object(
  {
    server: Type.Optional(ServerUrl('The ntfy server (default `https://ntfy.sh`)')),
    topic: withPatternMessage(
      Type.String({
        pattern: '^[A-Za-z0-9_-]{1,64}$',
        description: 'The topic: 1–64 letters, digits, `-` or `_`',
      }),
      'must be 1 to 64 letters, digits, - or _',
    ),
    token: Type.Optional(Credential('An access token (`tk_…`), for a topic that needs one')),
  },
  { additionalProperties: false },
)
export type NtfyConfig = Static<typeof NtfyConfigSchema>

/** The server a channel without one publishes to. */
export const NTFY_SH = 'https://ntfy.sh'

/** An emoji tag per event type (ntfy shows it before the title). */
const TAGS: Record<string, string> = {
  'status.changed': 'bell',
  'status.stale': 'hourglass',
  'channel.test': 'white_check_mark',
  'channel.disabled': 'warning',
}

/** What to POST for one event: ntfy's JSON publishing, `{topic, title, message, tags, click}` to the server's root. */
export function ntfyPublishRequest(
  config: NtfyConfig,
  event: NotificationEvent,
  context: SendContext,
) {
  const text = notificationText(event, context)
  return {
    url: endpointUrl(config.server ?? NTFY_SH, ''),
    headers: {
      ...JSON_HEADERS,
      ...(config.token !== undefined && { authorization: `Bearer ${config.token}` }),
    },
    body: JSON.stringify({
      topic: config.topic,
      title: oneLine(text.title),
      message: text.body,
      tags: [TAGS[event.type] ?? 'bell'],
      click: text.url,
    }),
  }
}

export const ntfyChannel = (outbound: OutboundClient): ChannelTypeDefinition<NtfyConfig> => ({
  type: 'ntfy',
  configSchema: NtfyConfigSchema,
  verifiedOnCreate: true,
  credentials: ['token'],
  configProblems(config): FieldError[] {
    const problem = config.server && serverUrlProblem('config.server', config.server)
    return problem ? [problem] : []
  },
  // ntfy.sh is public: only a server the user names is judged
  reachProblem: async (config) =>
    config.server === undefined
      ? null
      : serverReachProblem(outbound, 'config.server', config.server),
  defaultName: (config) => `ntfy (${config.topic})`,
  async send(_channel, config, event, context) {
    const { url, headers, body } = ntfyPublishRequest(config, event, context)
    return sendToService(outbound, url, { headers, body })
  },
})
