import { t } from '../i18n.ts'
import type { Channel } from '../types.ts'

// The push and chat services a channel can send to (docs/notifications.md#services): what
// the app's form asks for each, in the API's names (`config.<name>`).

export interface ServiceField {
  /** The property of `config`. */
  name: string
  /** Its label, in the language shown. */
  label: () => string
  input: 'url' | 'text' | 'secret' | 'number'
  required: boolean
  hint?: () => string
  placeholder?: string
}

export interface Service {
  /** The channel type in the API. */
  type: 'gotify' | 'pushover' | 'telegram' | 'matrix' | 'ntfy'
  label: string
  fields: ServiceField[]
}

export const SERVICES: readonly Service[] = [
  {
    type: 'ntfy',
    label: 'ntfy',
    fields: [
      {
        name: 'topic',
        label: () => t('app.notifications.service.ntfy.topic'),
        input: 'text',
        required: true,
        hint: () => t('app.notifications.service.ntfy.topicHint'),
      },
      {
        name: 'server',
        label: () => t('app.notifications.service.ntfy.server'),
        input: 'url',
        required: false,
        placeholder: 'https://ntfy.sh',
        hint: () => t('app.notifications.service.ntfy.serverHint'),
      },
      {
        name: 'token',
        label: () => t('app.notifications.service.ntfy.token'),
        input: 'secret',
        required: false,
        hint: () => t('app.notifications.service.ntfy.tokenHint'),
      },
    ],
  },
  {
    type: 'gotify',
    label: 'Gotify',
    fields: [
      {
        name: 'server',
        label: () => t('app.notifications.service.gotify.server'),
        input: 'url',
        required: true,
        placeholder: 'https://',
      },
      {
        name: 'token',
        label: () => t('app.notifications.service.gotify.token'),
        input: 'secret',
        required: true,
        hint: () => t('app.notifications.service.gotify.tokenHint'),
      },
      {
        name: 'priority',
        label: () => t('app.notifications.service.gotify.priority'),
        input: 'number',
        required: false,
        hint: () => t('app.notifications.service.gotify.priorityHint'),
      },
    ],
  },
  {
    type: 'pushover',
    label: 'Pushover',
    fields: [
      {
        name: 'user',
        label: () => t('app.notifications.service.pushover.user'),
        input: 'secret',
        required: true,
        hint: () => t('app.notifications.service.pushover.userHint'),
      },
      {
        name: 'token',
        label: () => t('app.notifications.service.pushover.token'),
        input: 'secret',
        required: true,
        hint: () => t('app.notifications.service.pushover.tokenHint'),
      },
      {
        name: 'device',
        label: () => t('app.notifications.service.pushover.device'),
        input: 'text',
        required: false,
        hint: () => t('app.notifications.service.pushover.deviceHint'),
      },
    ],
  },
  {
    type: 'telegram',
    label: 'Telegram',
    fields: [
      {
        name: 'botToken',
        label: () => t('app.notifications.service.telegram.botToken'),
        input: 'secret',
        required: true,
        hint: () => t('app.notifications.service.telegram.botTokenHint'),
      },
      {
        name: 'chatId',
        label: () => t('app.notifications.service.telegram.chat'),
        input: 'text',
        required: true,
        hint: () => t('app.notifications.service.telegram.chatHint'),
      },
    ],
  },
  {
    type: 'matrix',
    label: 'Matrix',
    fields: [
      {
        name: 'homeserver',
        label: () => t('app.notifications.service.matrix.homeserver'),
        input: 'url',
        required: true,
        placeholder: 'https://matrix.example.org',
      },
      {
        name: 'roomId',
        label: () => t('app.notifications.service.matrix.room'),
        input: 'text',
        required: true,
        hint: () => t('app.notifications.service.matrix.roomHint'),
      },
      {
        name: 'accessToken',
        label: () => t('app.notifications.service.matrix.token'),
        input: 'secret',
        required: true,
        hint: () => t('app.notifications.service.matrix.tokenHint'),
      },
    ],
  },
]

/** A service's form as the `config` of `POST /v1/user/channels`: empty optional fields left out. */
export function serviceConfig(service: Service, data: FormData): Record<string, unknown> {
  const config: Record<string, unknown> = {}
  for (const field of service.fields) {
    const text = String(data.get(field.name) ?? '').trim()
    if (text === '' && !field.required) continue
    config[field.name] = field.input === 'number' && text !== '' ? Number(text) : text
  }
  return config
}

/** Where a service channel sends, in one line (never a credential: the API shows none). */
export function serviceTarget(channel: Channel): string | null {
  const config = (channel.config ?? {}) as Record<string, unknown>
  const text = (name: string) => String(config[name] ?? '')
  switch (channel.type) {
    case 'gotify':
      return t('app.notifications.target.gotify', { server: text('server') })
    case 'pushover':
      return config.device
        ? t('app.notifications.target.pushoverDevice', { device: text('device') })
        : t('app.notifications.target.pushover')
    case 'telegram':
      return t('app.notifications.target.telegram', { chat: text('chatId') })
    case 'matrix':
      return t('app.notifications.target.matrix', {
        room: text('roomId'),
        server: text('homeserver'),
      })
    case 'ntfy':
      return t('app.notifications.target.ntfy', {
        topic: text('topic'),
        server: config.server ? text('server') : 'https://ntfy.sh',
      })
    default:
      return null
  }
}
