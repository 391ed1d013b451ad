import { html } from '../lib/html.ts'
import type { InvitationLinkPreview } from '../modules/statuses/invitations.schemas.ts'
import { type AssetUrls, formatUtc, page } from './share-page.ts'

const ROLE_TEXT = {
  subscriber: 'a subscriber: you will see it and its updates',
  updater: 'an updater: you will see it and may set its value',
} as const

/**
 * The page an invitation link opens (`/invite/<token>`, docs/accounts.md#invitation-links):
 * what it offers, and how to take it up. Opening it acts on nothing, so a link preview or a
 * crawler that opens the page accepts nothing. Someone signed in (`signedInAs`, their name)
 * answers it here, with the page's own form post; someone else signs up or signs in first.
 * Written for a person: no API address (those are in the API reference).
 */
export function renderInvitePage(
  assets: AssetUrls,
  invitation: InvitationLinkPreview,
  token: string,
  signedInAs: string | null,
): string {
  const title = `Invitation to ${invitation.statusName}`
  const here = `/invite/${encodeURIComponent(token)}`
  // note: the expiry as a date ("until 8 June 2030, 12:00"), never a relative time: the
  // script shows it in the reader's own zone (data-absolute)
  const until = html`<p class="meta">The invitation is open until <time datetime="${invitation.expiresAt}" data-absolute>${formatUtc(invitation.expiresAt)}</time>.</p>`
  const answer =
    signedInAs === null
      ? html`<p>To accept it, sign up, or sign in if you already have an account.</p>
<p class="invite-actions"><a class="invite-button primary" href="/sign-up?invitation=${encodeURIComponent(token)}">Sign up and accept</a>
<a class="invite-button" href="/sign-in?next=${encodeURIComponent(here)}">Sign in to accept</a></p>`
      : html`<p>You are signed in as <strong dir="auto">${signedInAs}</strong>.</p>
<form method="post" action="${here}" class="invite-actions">
<button type="submit" class="invite-button primary">Accept</button>
<a class="invite-button" href="/">Decline</a>
</form>
<p class="meta">Declining changes nothing: the invitation stays open until it expires.</p>`
  return page(
    title,
    assets,
    html``,
    html`<main>
<div class="top"><span>Invitation</span></div>
<h1 dir="auto">${invitation.statusName}</h1>
<p><strong dir="auto">${invitation.inviterName}</strong> invites you to follow this status as ${ROLE_TEXT[invitation.role]}.</p>
${until}
${answer}
</main>`,
  )
}
