import type { Kysely } from 'kysely'
import { type Static, Type } from 'typebox'
import type { DB, Db } from '../../db/database.ts'
import { languageOf, translator } from '../../i18n/i18n.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import { ApiError, rateLimited, unavailable, validationError } from '../../lib/errors.ts'
import { escapeHtml } from '../../lib/html.ts'
import { MailError, type Mailer } from '../../lib/mailer.ts'
import {
  type AuthTokenState,
  consumeAuthToken,
  inspectAuthToken,
  issueAuthToken,
  linkGone,
  recentAuthTokens,
} from '../users/auth-tokens.service.ts'
import { emailKeyOf, emailProblem, MAX_EMAIL_LENGTH } from '../users/email-address.ts'
import { userById } from '../users/users.service.ts'
import {
  deleteChannelById,
  findChannelById,
  markChannelVerified,
} from './channel-marks.repository.ts'
import {
  type ChannelRow,
  type ChannelTypeDefinition,
  DeliveryError,
  type NotificationEvent,
  type SendContext,
} from './channel-types.ts'
import { notificationText, oneLine, settingsUrl } from './notification-message.ts'

// The e-mail channel (docs/notifications.md#e-mail): a message per event to an address its
// owner confirmed by a mailed link. The link opens a page whose button confirms (a POST), so
// a mail scanner that fetches links confirms nothing. Without SMTP the type is refused.

/** The one-time token purpose of a channel's confirmation link. */
export const CHANNEL_CONFIRMATION = 'confirm-channel'

/** Where a confirmation link points, under the service's public origin. */
export const CHANNEL_CONFIRMATION_PATH = '/auth/channel/'

const HOUR = 60 * 60 * 1000

/** How long a confirmation link works, and how many one user may have mailed an hour. */
export const CHANNEL_CONFIRMATION_LIMITS = {
  lifetimeMs: 24 * HOUR,
  perHour: 5,
} as const

export const EmailChannelConfigSchema = Type.Object(
  {
    address: Type.String({
      minLength: 1,
      maxLength: MAX_EMAIL_LENGTH,
      description: 'Where the messages go; confirmed by a mailed link before any is sent',
    }),
  },
  { additionalProperties: false },
)
export type EmailChannelConfig = Static<typeof EmailChannelConfigSchema>

export interface EmailChannelDeps {
  db: Kysely<DB>
  /** null: no SMTP_URL; the type answers 501 `emailUnavailable`. */
  mailer: Mailer | null
  clock?: Clock
}

export const channelEmailUnavailable = () =>
  new ApiError(
    501,
    'emailUnavailable',
    'This service sends no e-mail (no SMTP server is configured): use a webhook or browser notifications',
  )

/** What a confirmation link carries, so a link for an address since changed confirms nothing. */
interface ConfirmationData {
  channelId: string
  addressKey: string
}

const htmlMessage = (
  lang: string,
  paragraphs: string[],
  link: { href: string; text: string },
  footer: string,
) =>
  `<!doctype html>
<html lang="${lang}"><body>
${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')}
<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></p>
<hr>
<p style="color:#666;font-size:smaller">${escapeHtml(footer)}</p>
</body></html>
`

/**
 * The message one event makes, in the recipient's language: subject, plain text, HTML (every
 * piece of user data escaped).
 */
export function notificationMail(
  event: NotificationEvent,
  context: SendContext,
): { subject: string; text: string; html: string } {
  const t = translator(context.locale)
  const { title, body, url } = notificationText(event, context)
  const footer = t('mail.notification.footer', { url: settingsUrl(context.publicUrl) })
  const linkText = event.status
    ? t('mail.notification.openStatus')
    : t('mail.notification.openSettings')
  return {
    subject: oneLine(title),
    text: `${body}\n\n${linkText}: ${url}\n\n-- \n${footer}\n`,
    html: htmlMessage(languageOf(context.locale), [body], { href: url, text: linkText }, footer),
  }
}

/** Tells an SMTP refusal that will not change (5xx about the mailbox) from one that may. */
function deliveryErrorOf(err: unknown): DeliveryError {
  const message = err instanceof Error ? err.message : String(err)
  const code = err instanceof MailError ? err.responseCode : undefined
  // 550–553: no such mailbox, not allowed, bad address; retrying cannot help
  const permanent = code !== undefined && code >= 550 && code <= 553
  return new DeliveryError(message, !permanent)
}

/** The e-mail channel type, for the channel registry. */
export function emailChannelType(
  deps: EmailChannelDeps,
): ChannelTypeDefinition<EmailChannelConfig> {
  const clock = deps.clock ?? systemClock
  const now = () => new Date(clock.now()).toISOString()
  return {
    type: 'email',
    configSchema: EmailChannelConfigSchema,
    verifiedOnCreate: false,
    defaultName: (config) => config.address,

    async beforeCreate({ userId, config }) {
      if (!deps.mailer) throw channelEmailUnavailable()
      const problem = emailProblem(config.address)
      if (problem) throw validationError([{ field: 'config.address', message: problem }])
      // note: a confirmation mail goes to any address a user types, so their number is capped
      // (docs/security.md#mail-bombing): past it, no channel is made and nothing is mailed
      const recent = await recentAuthTokens(deps.db, clock, userId, CHANNEL_CONFIRMATION, HOUR)
      if (recent >= CHANNEL_CONFIRMATION_LIMITS.perHour) throw rateLimited(60 * 60)
    },

    async afterCreate(channel, config, context) {
      // the account's own confirmed address needs no second confirmation
      const owner = await userById(deps.db, channel.user_id)
      if (
        owner?.email_verified_at &&
        owner.email !== null &&
        emailKeyOf(owner.email) === emailKeyOf(config.address)
      ) {
        await markChannelVerified(deps.db, channel.id, now())
        return
      }
      if (!deps.mailer) throw channelEmailUnavailable()
      const issued = await issueAuthToken(deps.db, clock, {
        purpose: CHANNEL_CONFIRMATION,
        userId: channel.user_id,
        data: {
          channelId: channel.id,
          addressKey: emailKeyOf(config.address),
        } satisfies ConfirmationData,
        lifetimeMs: CHANNEL_CONFIRMATION_LIMITS.lifetimeMs,
      })
      const link = `${context.publicUrl.replace(/\/+$/, '')}${CHANNEL_CONFIRMATION_PATH}${issued.token}`
      // in the language of the account that asked (docs/languages.md)
      const t = translator(owner?.locale)
      const intro = t('mail.channelConfirmation.intro', { address: config.address })
      const ignore = t('mail.channelConfirmation.ignore')
      try {
        await deps.mailer.send({
          to: config.address,
          subject: t('mail.channelConfirmation.subject'),
          text: `${intro}\n\n${link}\n\n${ignore}\n`,
          html: htmlMessage(
            languageOf(owner?.locale),
            [intro],
            { href: link, text: t('mail.channelConfirmation.button') },
            ignore,
          ),
        })
      } catch {
        // a channel whose link never went out could never be confirmed: it goes, and the
        // request fails as a whole (503), so asking again later starts afresh
        await deleteChannelById(deps.db, channel.id)
        throw unavailable(
          'The confirmation mail could not be sent (the mail server did not take it); try again later',
        )
      }
    },

    async send(channel, config, event, context) {
      if (!deps.mailer) throw new DeliveryError('this service sends no e-mail (no SMTP)', false)
      // note: never mail an address its owner has not confirmed (not even a test)
      if (channel.verified_at === null)
        throw new DeliveryError('the address is not confirmed yet', false)
      const message = notificationMail(event, context)
      try {
        await deps.mailer.send({ to: config.address, ...message })
      } catch (err) {
        throw deliveryErrorOf(err)
      }
      return {}
    },
  }
}

/** What the page of a confirmation link shows before its button is pressed. */
export const channelConfirmationState = (
  db: Db,
  clock: Clock,
  token: string,
): Promise<AuthTokenState> => inspectAuthToken(db, clock, token, CHANNEL_CONFIRMATION)

/**
 * Confirms the channel a link was mailed for (the page's button): 404 for a link never made,
 * 410 for one used, expired, or whose channel is gone or now has another address.
 */
export async function confirmEmailChannel(
  db: Kysely<DB>,
  clock: Clock,
  token: string,
): Promise<{ address: string }> {
  return db.transaction().execute(async (tx) => {
    const used = await consumeAuthToken(tx, clock, token, CHANNEL_CONFIRMATION)
    const data = used.data as Partial<ConfirmationData> | null
    const channel: ChannelRow | undefined =
      typeof data?.channelId === 'string' ? await findChannelById(tx, data.channelId) : undefined
    const address = channel ? addressOf(channel) : undefined
    if (!channel || address === undefined || emailKeyOf(address) !== data?.addressKey)
      throw linkGone()
    await markChannelVerified(tx, channel.id, new Date(clock.now()).toISOString())
    return { address }
  })
}

const addressOf = (channel: ChannelRow): string | undefined => {
  if (channel.type !== 'email') return undefined
  const config = JSON.parse(channel.config) as { address?: unknown }
  return typeof config.address === 'string' ? config.address : undefined
}
