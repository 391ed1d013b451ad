import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { validationError } from '../../lib/errors.ts'
import { recordSecurityEvent } from '../audit/security-events.ts'
import {
  consumeAuthToken,
  issueAuthToken,
  linkGone,
  openAuthTokenUser,
} from './auth-tokens.service.ts'
import { emailProblem } from './email-address.ts'
import { confirmEmailAddress, emailTaken } from './email-and-password.service.ts'
import {
  type PasskeyView,
  passkeyRegistrationOptions,
  type RelyingParty,
  registerPasskey,
} from './passkeys.service.ts'
import { accountWords, type PasswordHasher, passwordProblem, scryptHasher } from './passwords.ts'
import { findUserByEmail, updateUser } from './users.repository.ts'

// First run in the browser (docs/app.md#the-first-start): the first start prints a one-time
// setup link; its page asks the person who started the service for a name, an e-mail address
// and a password (or a passkey), and leaves them signed in as the first user, the operator.
// The link is the proof: whoever holds it may claim the first account, once, for a day.

const PURPOSE = 'setup'

/**
 * How long the setup link works. A day: enough to start the service now and open the app
 * later; an expired or lost link is replaced by `statusd user link` (docs/operations.md#users).
 */
export const SETUP_LINK_LIFETIME_MS = 24 * 60 * 60 * 1000

/** The app's setup screen for a token (app/src/screens/setup.tsx). */
export const setupLinkUrl = (base: string, token: string) => `${base}/setup/${token}`

/** A new setup link for the first user; its URL is shown once. */
export async function createSetupLink(
  db: Kysely<DB>,
  clock: Clock,
  userId: string,
  base: string,
): Promise<{ url: string; expiresAt: string }> {
  const issued = await issueAuthToken(db, clock, {
    purpose: PURPOSE,
    userId,
    lifetimeMs: SETUP_LINK_LIFETIME_MS,
  })
  return { url: setupLinkUrl(base, issued.token), expiresAt: issued.expiresAt }
}

export interface SetupDeps {
  db: Kysely<DB>
  clock: Clock
  hasher?: PasswordHasher
}

/** What the account is set up with: a name, an e-mail address, and one way to sign in. */
export interface SetupInput {
  name: string
  email: string
  password?: string
  passkey?: { name?: string; response: Parameters<typeof registerPasskey>[4]['response'] }
}

/** The user an open setup link is for: 404 for a link never made, 410 for one used or expired. */
async function userOfLink(deps: SetupDeps, token: string): Promise<string> {
  const userId = await openAuthTokenUser(deps.db, deps.clock, token, PURPOSE)
  if (userId === null) throw linkGone()
  return userId
}

/** Whether the setup link can still be used: 404 / 410 otherwise. */
export async function checkSetupLink(deps: SetupDeps, token: string): Promise<void> {
  await userOfLink(deps, token)
}

function assertEmail(email: string): void {
  const problem = emailProblem(email)
  if (problem !== undefined)
    throw validationError([{ field: 'email', message: problem }], `E-mail address ${problem}`)
}

/**
 * Options for `navigator.credentials.create()` for the first user, while the link is open:
 * the authenticator shows the name and address typed on the setup page.
 */
export async function setupPasskeyOptions(
  deps: SetupDeps,
  rp: RelyingParty,
  token: string,
  shownAs: { name: string; email: string },
) {
  assertEmail(shownAs.email)
  const userId = await userOfLink(deps, token)
  return passkeyRegistrationOptions(deps.db, rp, deps.clock, userId, shownAs)
}

/**
 * Completes the setup: uses the link, gives the first user the name and the e-mail address
 * (confirmed: the operator vouches for their own, as for a user they make verified) and the
 * password or the passkey, all in one transaction, so a refusal (password rules 400, an
 * address another account holds 409, a passkey answer that does not verify 400, a link used
 * meanwhile 410) changes nothing and leaves the link usable. Returns the user's id, for the
 * session that follows.
 */
export async function completeSetup(
  deps: SetupDeps,
  rp: () => RelyingParty,
  token: string,
  input: SetupInput,
  client: { ip?: string | undefined; userAgent?: string | undefined } = {},
): Promise<{ userId: string; passkey?: PasskeyView }> {
  assertEmail(input.email)
  if ((input.password === undefined) === (input.passkey === undefined))
    throw validationError(
      [{ field: 'password', message: 'or passkey is required, not both' }],
      'Set up with a password or a passkey',
    )
  if (input.password !== undefined) {
    const problem = await passwordProblem(input.password, accountWords(input.email, input.name))
    if (problem !== undefined)
      throw validationError([{ field: 'password', message: problem }], `Password ${problem}`)
  }
  // a link that cannot work, or an address another account holds, fails before the slow hash
  const owner = await userOfLink(deps, token)
  const holder = await findUserByEmail(deps.db, input.email)
  if (holder && holder.id !== owner) throw emailTaken()
  const passwordHash =
    input.password === undefined
      ? undefined
      : await (deps.hasher ?? scryptHasher).hash(input.password)
  const now = new Date(deps.clock.now()).toISOString()
  let userId = ''
  const claim = async (tx: Transaction<DB>) => {
    const used = await consumeAuthToken(tx, deps.clock, token, PURPOSE)
    if (used.userId === null) throw linkGone()
    userId = used.userId
    await confirmEmailAddress(tx, used.userId, input.email, now)
    await updateUser(tx, used.userId, {
      name: input.name,
      ...(passwordHash !== undefined && { password_hash: passwordHash }),
    })
    // in the account's security log: the first way in was set, from where
    await recordSecurityEvent(tx, {
      kind: 'setupCompleted',
      userId: used.userId,
      actorId: used.userId,
      ip: client.ip,
      userAgent: client.userAgent,
      detail: { method: passwordHash === undefined ? 'passkey' : 'password' },
    })
  }
  if (input.passkey === undefined) {
    await deps.db.transaction().execute(claim)
    return { userId }
  }
  const passkey = await registerPasskey(deps.db, rp(), deps.clock, owner, input.passkey, {
    alongside: claim,
  })
  return { userId, passkey }
}
