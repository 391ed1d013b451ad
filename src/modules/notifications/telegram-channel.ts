import { type Static, Type } from 'typebox'
import type { OutboundClient } from '../../lib/outbound.ts'
import { withPatternMessage } from '../../lib/schema.ts'
import type { ChannelTypeDefinition, NotificationEvent, SendContext } from './channel-types.ts'
import { notificationText, oneLine } from './notification-message.ts'
import { Credential, endpointUrl, JSON_HEADERS, sendToService } from './service-channel.ts'

// The `telegram` channel type (docs/notifications.md#telegram): each event is a message a
// bot of the user's sends to a chat, through the Bot API's sendMessage.

/** The Bot API; only tests name another (a local receiver: ChannelTypeDeps.serviceUrls). */
export const TELEGRAM_API = 'https://api.telegram.org'

export const TelegramConfigSchema = Type.Object(
  {
    botToken: Credential('The bot\u2019s token, as @BotFather gives it (`123456:ABC-DEF…`)', {
      pattern: '^[0-9]{1,20}:[A-Za-z0-9_-]{20,100}$',
      patternMessage: 'must be the token @BotFather gave: digits, a colon, then the secret',
    }),
    chatId: withPatternMessage(
      Type.String({
        pattern: '^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$',
        description:
          'The chat to send to: its numeric id (`-1001234567890` for a group) or a public channel\u2019s `@username`',
      }),
      'must be a numeric chat id or an @username',
    ),
  },
  { additionalProperties: false },
)
export type TelegramConfig = Static<typeof TelegramConfigSchema>

/** Telegram's limit on a message's text. */
const MAX_TEXT = 4096

/** What to POST for one event: `POST /bot<token>/sendMessage` with `{chat_id, text}`. */
export function telegramRequest(
  config: TelegramConfig,
  event: NotificationEvent,
  context: SendContext,
  api = TELEGRAM_API,
) {
  const text = notificationText(event, context)
  return {
    url: endpointUrl(api, `bot${config.botToken}/sendMessage`),
    headers: { ...JSON_HEADERS },
    body: JSON.stringify({
      // note: as a string, which the Bot API takes for ids too (no precision to lose)
      chat_id: config.chatId,
      text: `${oneLine(text.title)}\n${text.body}\n${text.url}`.slice(0, MAX_TEXT),
    }),
  }
}

export const telegramChannel = (
  outbound: OutboundClient,
  api = TELEGRAM_API,
): ChannelTypeDefinition<TelegramConfig> => ({
  type: 'telegram',
  configSchema: TelegramConfigSchema,
  verifiedOnCreate: true,
  credentials: ['botToken'],
  defaultName: (config) => `Telegram (${config.chatId})`,
  async send(_channel, config, event, context) {
    const { url, headers, body } = telegramRequest(config, event, context, api)
    return sendToService(outbound, url, { headers, body })
  },
})
