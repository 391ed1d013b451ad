import { ApiError, api } from '../api.ts'
import { t } from '../i18n.ts'
import type { Channel, NewChannel, WebhookFormat } from '../types.ts'
import { serviceTarget } from './services.ts'

// The app's side of notification channels (docs/app.md#notifications-in-the-app): what the
// screens share, and subscribing this browser to push (docs/notifications.md#browser-push).

/** The webhook formats, as the API names them, with what each is for. */
export const WEBHOOK_FORMAT_TEXT: Record<WebhookFormat, () => string> = {
  standard: () => t('app.notifications.webhook.format.standard'),
  slack: () => t('app.notifications.webhook.format.slack'),
  discord: () => t('app.notifications.webhook.format.discord'),
  ntfy: () => t('app.notifications.webhook.format.ntfy'),
}

/**
 * True for the API's answer to a route it does not have (`404 No route …`): a part of
 * notifications this server does not offer yet. The screens say so instead of failing.
 */
export const isMissingRoute = (error: unknown): boolean =>
  error instanceof ApiError && error.status === 404 && error.message.startsWith('No route')

/** One line saying where a channel delivers. */
export function channelTarget(channel: Channel): string {
  const config = (channel.config ?? {}) as Record<string, unknown>
  if (channel.type === 'webhook')
    return `${String(config.url ?? '')} (${String(config.format ?? '')})`
  if (channel.type === 'email') return String(config.address ?? '')
  if (channel.type === 'webpush') return t('app.notifications.target.webpush')
  return serviceTarget(channel) ?? channel.type
}

/** Whether this browser can receive push notifications at all. */
export const pushSupported = (): boolean =>
  'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window

/**
 * Subscribes this browser to push with the service's key and stores the subscription as a
 * channel: `GET /v1/webpush/key` → `pushManager.subscribe` → `POST /v1/user/channels`.
 */
export async function addThisBrowser(name: string): Promise<NewChannel> {
  const permission = await Notification.requestPermission()
  if (permission !== 'granted') throw new Error(t('app.notifications.browser.denied'))
  const { publicKey } = await api<{ publicKey: string }>('GET', '/v1/webpush/key')
  const registration = await navigator.serviceWorker.ready
  let subscription: PushSubscription
  try {
    subscription = await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: publicKey,
    })
  } catch (error) {
    throw new Error(
      t('app.notifications.browser.subscribeFailed', { message: (error as Error).message }),
    )
  }
  return api<NewChannel>('POST', '/v1/user/channels', {
    body: {
      type: 'webpush',
      ...(name && { name }),
      config: { subscription: subscription.toJSON() },
    },
  })
}

/** The push endpoint this browser is subscribed with, if any (to mark its channel). */
export async function thisBrowserEndpoint(): Promise<string | null> {
  if (!pushSupported()) return null
  const registration = await navigator.serviceWorker.getRegistration()
  const subscription = await registration?.pushManager.getSubscription()
  return subscription?.endpoint ?? null
}

/** The push endpoint a `webpush` channel delivers to. */
export const endpointOf = (channel: Channel): string | null =>
  channel.type === 'webpush'
    ? (((channel.config as { subscription?: { endpoint?: unknown } } | null)?.subscription
        ?.endpoint as string | undefined) ?? null)
    : null
