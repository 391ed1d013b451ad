import type { Channel } from '../types.ts'

// The push and chat services a channel can send to (docs/notifications.md#services): what
// the app's form asks for each, in the API's names (`config.<name>`).

export interface ServiceField {
  /** The property of `config`. */
  name: string
  label: string
  input: 'url' | 'text' | 'secret' | 'number'
  required: boolean
  hint?: string
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
        label: 'Topic',
        input: 'text',
        required: true,
        hint: 'Letters, digits, - and _, up to 64.',
      },
      {
        name: 'server',
        label: 'Server',
        input: 'url',
        required: false,
        placeholder: 'https://ntfy.sh',
        hint: 'Leave empty for ntfy.sh.',
      },
      {
        name: 'token',
        label: 'Access token',
        input: 'secret',
        required: false,
        hint: 'Only for a protected topic (tk_…).',
      },
    ],
  },
  {
    type: 'gotify',
    label: 'Gotify',
    fields: [
      { name: 'server', label: 'Server', input: 'url', required: true, placeholder: 'https://' },
      {
        name: 'token',
        label: 'Application token',
        input: 'secret',
        required: true,
        hint: 'In Gotify: Apps → Create application.',
      },
      {
        name: 'priority',
        label: 'Priority',
        input: 'number',
        required: false,
        hint: '0 to 10; empty for 5.',
      },
    ],
  },
  {
    type: 'pushover',
    label: 'Pushover',
    fields: [
      {
        name: 'user',
        label: 'User key',
        input: 'secret',
        required: true,
        hint: 'On your Pushover dashboard (30 letters and digits).',
      },
      {
        name: 'token',
        label: 'Application API token',
        input: 'secret',
        required: true,
        hint: 'Of an application you registered at Pushover.',
      },
      {
        name: 'device',
        label: 'Device',
        input: 'text',
        required: false,
        hint: 'Only this device; empty for all.',
      },
    ],
  },
  {
    type: 'telegram',
    label: 'Telegram',
    fields: [
      {
        name: 'botToken',
        label: 'Bot token',
        input: 'secret',
        required: true,
        hint: 'From @BotFather: 123456:ABC-DEF…',
      },
      {
        name: 'chatId',
        label: 'Chat',
        input: 'text',
        required: true,
        hint: 'The chat’s numeric id, or a public channel’s @username.',
      },
    ],
  },
  {
    type: 'matrix',
    label: 'Matrix',
    fields: [
      {
        name: 'homeserver',
        label: 'Homeserver',
        input: 'url',
        required: true,
        placeholder: 'https://matrix.example.org',
      },
      {
        name: 'roomId',
        label: 'Room id',
        input: 'text',
        required: true,
        hint: 'Room settings → Advanced: !abc…:example.org',
      },
      {
        name: 'accessToken',
        label: 'Access token',
        input: 'secret',
        required: true,
        hint: 'Of the account that posts (a bot account).',
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
      return `Gotify at ${text('server')}`
    case 'pushover':
      return config.device ? `Pushover, device ${text('device')}` : 'Pushover, all devices'
    case 'telegram':
      return `Telegram chat ${text('chatId')}`
    case 'matrix':
      return `Matrix room ${text('roomId')} on ${text('homeserver')}`
    case 'ntfy':
      return `ntfy topic ${text('topic')} on ${config.server ? text('server') : 'https://ntfy.sh'}`
    default:
      return null
  }
}
