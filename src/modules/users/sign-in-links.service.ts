import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { issueAuthToken } from './auth-tokens.service.ts'
import { resolveUser } from './users.service.ts'

/** How long a sign-in link the operator prints works (docs/accounts.md#e-mail). */
export const SIGN_IN_LINK_LIFETIME_MS = 60 * 60 * 1000

/** The path a sign-in link opens: a page with a button, which signs in (web/auth-pages.routes.ts). */
export const signInLinkUrl = (base: string, token: string) => `${base}/auth/link/${token}`

export interface SignInLink {
  userId: string
  /** The link, shown once: whoever holds it signs in as the user until it is used or expires. */
  url: string
  expiresAt: string
}

/**
 * A one-time sign-in link for a user (by id or e-mail), for the operator to hand over (`statusd
 * user link`): the way in for a person without a password, or who lost it, when there is no
 * SMTP to mail a reset link with.
 */
export async function createSignInLink(
  db: Kysely<DB>,
  clock: Clock,
  idOrEmail: string,
  base: string,
): Promise<SignInLink> {
  const user = await resolveUser(db, idOrEmail)
  const issued = await issueAuthToken(db, clock, {
    purpose: 'sign-in-link',
    userId: user.id,
    lifetimeMs: SIGN_IN_LINK_LIFETIME_MS,
  })
  return { userId: user.id, url: signInLinkUrl(base, issued.token), expiresAt: issued.expiresAt }
}
