import type { User } from '../../db/database.ts'
import { emailNotVerified, forbidden } from '../../lib/errors.ts'
import { acceptLinkIn, assertLinkUsableBy } from '../statuses/invitations.service.ts'
import { type AccountDeps, signUp } from '../users/accounts.service.ts'
import { emailKeyOf } from '../users/email-address.ts'

/** Who may sign up, and how a new account starts (SIGNUP, SMTP_URL). */
export interface SignUpPolicy {
  /** `open`: anyone; `invite`: only with an invitation link (or through the CLI). */
  signup: 'invite' | 'open'
  /** Whether e-mail addresses are verified by a mailed link (SMTP_URL is set). */
  emailVerification: boolean
}

export interface SignUpInput {
  email: string
  name: string
  password: string
  /** The token of an invitation link (`sdi_…`, docs/accounts.md#invitation-links). */
  invitation?: string
}

/**
 * Sign-up (docs/accounts.md#signing-up), through an invitation link when one is given: the
 * account starts `verified` (the inviter vouches for the person; a link bound to the address,
 * mailed there, also proves the address) and gets the link's role,
 * in the transaction that creates it, so a link that turns out unusable leaves no account.
 * Without a link, only when sign-up is open (403 otherwise).
 */
export async function signUpWith(
  accounts: AccountDeps,
  policy: SignUpPolicy,
  input: SignUpInput,
  now: number,
): Promise<User> {
  const { invitation, ...account } = input
  if (invitation === undefined) {
    if (policy.signup !== 'open')
      throw forbidden('Sign-up is by invitation only on this service: ask for an invitation')
    return signUp(accounts, { ...account, verified: !policy.emailVerification })
  }
  // refused before the password's slow hash: a forged (404), spent (410) or someone else's
  // (403) link; checked again, and used, in the account's transaction
  const { bound } = await assertLinkUsableBy(accounts.db, invitation, emailKeyOf(input.email), now)
  // a link bound to the address was mailed there: holding it proves the mailbox. Without
  // e-mail nothing was mailed, and nothing proves the address (docs/accounts.md#invitation-links)
  if (bound && !policy.emailVerification)
    throw emailNotVerified(
      'This invitation is for a confirmed e-mail address, and this service sends no e-mail to confirm one: ask for a link without an address',
    )
  const emailVerifiedAt = bound ? new Date(now).toISOString() : null
  return signUp(accounts, { ...account, verified: true, emailVerifiedAt }, async (tx, user) => {
    await acceptLinkIn(tx, user, invitation, now)
  })
}
