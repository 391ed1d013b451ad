import type { NotificationEvent, NotifiedStatus } from './channel-types.ts'

// What a person reads (docs/notifications.md#payloads): the words e-mail and browser push
// show for each event, in one place so the two say the same. Everything here is plain
// text; whoever puts it in HTML escapes it (names and values are user data).

/** The app's screen where a person manages their channels and rules (the unsubscribe hint). */
export const NOTIFICATION_SETTINGS_PATH = '/notifications'

/** A notice, ready for any channel that shows a title, a body and a link. */
export interface NotificationText {
  title: string
  body: string
  /** Where the notice leads: the status's page, or the notification settings. */
  url: string
}

/** A value as a sentence shows it: quoted, or "no value". */
const shown = (value: string | null): string => (value === null ? 'no value' : `“${value}”`)

/** The link to the app's notification settings on this service. */
export const settingsUrl = (publicUrl: string): string =>
  `${publicUrl.replace(/\/+$/, '')}${NOTIFICATION_SETTINGS_PATH}`

function statusText(type: string, status: NotifiedStatus, at: string): NotificationText {
  if (type === 'status.stale')
    return {
      title: `${status.name} is stale`,
      body: `No update since ${at}; its last value is ${shown(status.value)}.`,
      url: status.url,
    }
  return {
    title: `${status.name}: ${status.value ?? '(no value)'}`,
    body: `${status.name} is now ${shown(status.value)} (was ${shown(status.previousValue)}).`,
    url: status.url,
  }
}

/** The title, body and link of an event, in plain text. */
export function notificationText(event: NotificationEvent, publicUrl: string): NotificationText {
  if (event.status) return statusText(event.type, event.status, event.at)
  if (event.type === 'channel.test')
    return {
      title: 'Test notification from statusd',
      body: event.message ?? 'This channel works: notifications you set up will arrive here.',
      url: settingsUrl(publicUrl),
    }
  if (event.type === 'channel.disabled')
    return {
      title: 'A notification channel was turned off',
      body:
        event.message ??
        'One of your notification channels failed for 24 hours and was turned off. Check it and turn it on again in your notification settings.',
      url: settingsUrl(publicUrl),
    }
  return { title: 'statusd', body: event.message ?? event.type, url: settingsUrl(publicUrl) }
}

/** Control characters (line breaks included) as spaces: a subject or title is one line. */
export const oneLine = (text: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to remove them
  text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim()
