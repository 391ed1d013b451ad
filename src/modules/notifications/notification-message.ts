import { dateTimeIn, translator } from '../../i18n/i18n.ts'
import type { NotificationEvent, NotifiedStatus, SendContext } from './channel-types.ts'

// What a person reads (docs/notifications.md#payloads): the words e-mail, browser push and
// the push and chat services show for each event, in one place so they all say the same, in
// the recipient's language (docs/languages.md). Everything here is plain text; whoever puts
// it in HTML escapes it (names and values are user data, never translated).

/** The app's screen where a person manages their channels and rules (the unsubscribe hint). */
export const NOTIFICATION_SETTINGS_PATH = '/notifications'

/** A notice, ready for any channel that shows a title, a body and a link. */
export interface NotificationText {
  title: string
  body: string
  /** Where the notice leads: the status's page, or the notification settings. */
  url: string
}

type Translate = ReturnType<typeof translator>

/** A value as a sentence shows it: quoted, or "no value". */
const shown = (t: Translate, value: string | null): string =>
  value === null ? t('notify.value.none') : t('notify.value.quoted', { value })

/** The link to the app's notification settings on this service. */
export const settingsUrl = (publicUrl: string): string =>
  `${publicUrl.replace(/\/+$/, '')}${NOTIFICATION_SETTINGS_PATH}`

function statusText(
  t: Translate,
  locale: string | null | undefined,
  type: string,
  status: NotifiedStatus,
  at: string,
): NotificationText {
  if (type === 'status.stale')
    return {
      title: t('notify.stale.title', { name: status.name }),
      body: t('notify.stale.body', {
        at: dateTimeIn(locale, at),
        value: shown(t, status.value),
      }),
      url: status.url,
    }
  return {
    title: t('notify.changed.title', {
      name: status.name,
      value: status.value ?? t('notify.value.noneShort'),
    }),
    body: t('notify.changed.body', {
      name: status.name,
      value: shown(t, status.value),
      previous: shown(t, status.previousValue),
    }),
    url: status.url,
  }
}

/**
 * The title, body and link of an event, in plain text, in the recipient's language
 * (`context.locale`).
 */
export function notificationText(event: NotificationEvent, context: SendContext): NotificationText {
  const t = translator(context.locale)
  const { publicUrl } = context
  if (event.status) return statusText(t, context.locale, event.type, event.status, event.at)
  const name = event.channelName
  if (event.type === 'channel.test')
    return {
      title: t('notify.channelTest.title'),
      body:
        name !== undefined
          ? t('notify.channelTest.body', { name })
          : (event.message ?? t('notify.channelTest.bodyUnnamed')),
      url: settingsUrl(publicUrl),
    }
  if (event.type === 'channel.disabled')
    return {
      title: t('notify.channelDisabled.title'),
      body:
        name !== undefined
          ? t('notify.channelDisabled.body', { name })
          : (event.message ?? t('notify.channelDisabled.bodyUnnamed')),
      url: settingsUrl(publicUrl),
    }
  return { title: 'statusd', body: event.message ?? event.type, url: settingsUrl(publicUrl) }
}

/** The words of a notice's link, for services that show one: "Open Meeting room 4". */
export const notificationLinkText = (event: NotificationEvent, context: SendContext): string => {
  const t = translator(context.locale)
  return event.status
    ? t('notify.open.status', { name: oneLine(event.status.name) })
    : t('notify.open.service')
}

/** Control characters (line breaks included) as spaces: a subject or title is one line. */
export const oneLine = (text: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to remove them
  text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim()
