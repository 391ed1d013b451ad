import { translator } from '../i18n/i18n.ts'
import type { Language } from '../i18n/languages.ts'
import { html } from '../lib/html.ts'
import type { InvitationLinkPreview } from '../modules/statuses/invitations.schemas.ts'
import { withMarkup } from './page-language.ts'
import { type AssetUrls, page, time } from './share-page.ts'

/** What each role offers, as the page says it. */
const ROLE_TEXT = {
  subscriber: 'page.invite.roleSubscriber',
  updater: 'page.invite.roleUpdater',
} as const

/**
 * The page an invitation link opens (`/invite/<token>`, docs/accounts.md#invitation-links):
 * what it offers, and how to take it up, in `lang`. Opening it acts on nothing, so a link
 * preview or a crawler that opens the page accepts nothing. Someone signed in (`signedInAs`,
 * their name) answers it here, with the page's own form post; someone else signs up or signs
 * in first. Written for a person: no API address (those are in the API reference).
 */
export function renderInvitePage(
  lang: Language,
  assets: AssetUrls,
  invitation: InvitationLinkPreview,
  token: string,
  signedInAs: string | null,
): string {
  const t = translator(lang)
  const title = t('page.invite.title', { status: invitation.statusName })
  const here = `/invite/${encodeURIComponent(token)}`
  // note: the expiry as a date ("until 8 June 2030, 12:00"), never a relative time: the
  // script shows it in the reader's own zone (data-absolute)
  const until = html`<p class="meta">${withMarkup(
    (mark) => t('page.invite.until', { time: mark }),
    time(lang, invitation.expiresAt, { absolute: true }),
  )}</p>`
  const answer =
    signedInAs === null
      ? html`<p>${t('page.invite.signUpText')}</p>
<p class="invite-actions"><a class="invite-button primary" href="/sign-up?invitation=${encodeURIComponent(token)}">${t('page.invite.signUp')}</a>
<a class="invite-button" href="/sign-in?next=${encodeURIComponent(here)}">${t('page.invite.signIn')}</a></p>`
      : html`<p>${withMarkup(
          (mark) => t('page.invite.signedInAs', { name: mark }),
          html`<strong dir="auto">${signedInAs}</strong>`,
        )}</p>
<form method="post" action="${here}" class="invite-actions">
<button type="submit" class="invite-button primary">${t('page.invite.accept')}</button>
<a class="invite-button" href="/">${t('page.invite.decline')}</a>
</form>
<p class="meta">${t('page.invite.declineNote')}</p>`
  return page(
    lang,
    title,
    assets,
    html``,
    html`<main>
<div class="top"><span>${t('page.invite.heading')}</span></div>
<h1 dir="auto">${invitation.statusName}</h1>
<p>${withMarkup(
      (mark) => t('page.invite.invites', { inviter: mark, role: t(ROLE_TEXT[invitation.role]) }),
      html`<strong dir="auto">${invitation.inviterName}</strong>`,
    )}</p>
${until}
${answer}
</main>`,
  )
}
