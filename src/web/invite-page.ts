import type { InvitationLinkPreview } from '../modules/statuses/invitations.schemas.ts'
import { html } from './html.ts'
import { type AssetUrls, formatUtc, page } from './share-page.ts'

const ROLE_TEXT = {
  subscriber: 'a subscriber: you will see it and its updates',
  updater: 'an updater: you will see it and may set its value',
} as const

/**
 * The page an invitation link opens (`/invite/<token>`, docs/accounts.md#invitation-links):
 * what it offers, and how to take it up. Nothing on it acts: accepting takes a signed-in
 * person's request, so a link preview or a crawler that opens the page accepts nothing.
 */
export function renderInvitePage(
  assets: AssetUrls,
  invitation: InvitationLinkPreview,
  origin: string,
  token: string,
): string {
  const title = `Invitation to ${invitation.statusName}`
  return page(
    title,
    assets,
    html``,
    html`<main>
<div class="top"><span>Invitation</span></div>
<h1>${invitation.statusName}</h1>
<p>${invitation.inviterName} invites you to follow this status as ${ROLE_TEXT[invitation.role]}.</p>
<p class="meta">The invitation is open until <time datetime="${invitation.expiresAt}">${formatUtc(invitation.expiresAt)}</time>.</p>
<p>Sign in to statusd and accept it, or sign up with it if you have no account yet.</p>
<p><a class="invite-accept" href="/sign-up?invitation=${encodeURIComponent(token)}">Accept the invitation</a></p>
<p class="meta">With the API (<a href="${origin}/docs">docs</a>): accept it signed in with
<code>POST ${origin}/v1/invitations/${token}/accept</code>, or sign up with
<code>POST ${origin}/v1/auth/signup</code> and <code>"invitation": "${token}"</code> in the body.</p>
</main>`,
  )
}
