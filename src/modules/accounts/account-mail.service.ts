import type { Kysely, Transaction } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { DB, Db, User } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { translator } from '../../i18n/i18n.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import { ApiError, notFound, rateLimited, validationError } from '../../lib/errors.ts'
import { type Mailer, type MailLog, sendInBackground } from '../../lib/mailer.ts'
import { type Requester, recordBy } from '../audit/security-events.ts'
import { announceRevokedKeys, type KeyDeps, revokeKeysOfUserIn } from '../keys/keys.service.ts'
import {
  type AuthTokenPurpose,
  type AuthTokenState,
  consumeAuthToken,
  inspectAuthToken,
  issueAuthToken,
  linkGone,
  linkUnknown,
  recentAuthTokens,
  revokeAuthTokens,
} from '../users/auth-tokens.service.ts'
import {
  confirmEmailAddress,
  replacePasswordHash,
  userByEmail,
} from '../users/email-and-password.service.ts'
import { deleteAllPasskeys } from '../users/passkeys.service.ts'
import { type PasswordHasher, passwordProblem, scryptHasher } from '../users/passwords.ts'
import {
  endSessionsOf,
  type SessionHolders,
  type SessionView,
  startSession,
} from '../users/sessions.service.ts'
import { assertEnabled, userById } from '../users/users.service.ts'

// What statusd mails, and what following its links does (docs/accounts.md#e-mail): e-mail
// verification, password reset, and the operator's sign-in links. Every link carries a
// one-time token (users/auth-tokens.service.ts); following one opens a page whose button
// does the work (a POST), so a mail scanner that fetches links uses none.

const MINUTE = 60 * 1000
const HOUR = 60 * MINUTE

/** How long each kind of link works. */
export const LINK_LIFETIMES = {
  'verify-email': 24 * HOUR,
  'password-reset': HOUR,
} as const

/**
 * Mail-bombing limits (docs/security.md): how many messages one account's address gets.
 * A reset link at most every RESET_INTERVAL and RESET_PER_DAY a day, whoever asks (further
 * requests still answer 202, and send nothing); verification links VERIFY_PER_HOUR an hour.
 */
export const MAIL_LIMITS = {
  resetIntervalMs: 5 * MINUTE,
  resetsPerDay: 5,
  verificationsPerHour: 5,
  /** Reset requests one client address may make in RESET_CLIENT_WINDOW (then 429). */
  resetRequestsPerClient: 10,
  resetClientWindowMs: HOUR,
} as const

/** A session just started: its secret token (for the cookie) and what it is. */
export interface StartedSession {
  token: string
  session: SessionView
  user: User
}

export interface AccountMailDeps {
  db: Kysely<DB>
  /** null: no SMTP_URL, nothing can be mailed. */
  mailer: Mailer | null
  /** The base of every link (PUBLIC_URL, or the address the service listens on). */
  linkBase: () => string
  log: MailLog
  clock?: Clock
  hasher?: PasswordHasher
  /** What is open on sessions a password reset ends (event streams). */
  holders?: SessionHolders
  /** Where the keys a proven address revokes are forgotten and announced (every instance). */
  keys?: Omit<KeyDeps, 'db' | 'statusReach'>
}

/** The one-time links that stop working when an address is proven: none of them was the prover's. */
const LINKS_ENDED_BY_PROOF: AuthTokenPurpose[] = ['sign-in-link', 'verify-email', 'password-reset']

/** Who a session is started for, and from where (shown in their list of sessions). */
export interface ClientMeta {
  userAgent?: string | undefined
  ip?: string | undefined
}

/** Who follows a mailed link: its owner, proven by holding it, from this client. */
const requesterFrom = (userId: string, client: ClientMeta): Requester => ({
  actorId: userId,
  ip: client.ip ?? null,
  userAgent: client.userAgent ?? null,
})

export const mailUnavailable = () =>
  new ApiError(
    501,
    'emailUnavailable',
    'This service sends no e-mail: ask its operator for a sign-in link (statusd user link <your e-mail>)',
  )

/**
 * The e-mail flows of one app. Messages go out in the background (`sendInBackground`): a
 * request never waits for SMTP. `idle()` waits for what is under way (the app's shutdown).
 */
export class AccountMail {
  readonly #deps: AccountMailDeps
  readonly #clock: Clock
  readonly #pending = new Set<Promise<unknown>>()
  /** Reset requests per client address, in this process (docs/security.md#mail-bombing). */
  readonly #resetRequests: LRUCache<string, { count: number }>

  constructor(deps: AccountMailDeps) {
    this.#deps = deps
    this.#clock = deps.clock ?? systemClock
    this.#resetRequests = new LRUCache({
      // note: a size of one per entry rather than `max`, which allocates room for every
      // entry up front (docs/performance.md#cold-start-and-memory)
      maxSize: 100_000,
      sizeCalculation: () => 1,
      ttl: MAIL_LIMITS.resetClientWindowMs,
      perf: this.#clock,
      // note: read the clock on every check (by default lru-cache keeps a read for 1 ms)
      ttlResolution: 0,
    })
  }

  /** Whether e-mail can be sent (SMTP_URL is set). */
  get enabled(): boolean {
    return this.#deps.mailer !== null
  }

  /** Runs `work` after the response, keeping track of it for `idle()`; a failure is logged. */
  #background(work: () => Promise<unknown>, what: string): void {
    const task = work().catch((err: unknown) =>
      this.#deps.log.warn(
        { err: { message: (err as Error)?.message ?? String(err) } },
        `e-mail not sent (${what})`,
      ),
    )
    this.#pending.add(task)
    void task.finally(() => this.#pending.delete(task))
  }

  /** Resolves once every message under way is sent or has failed. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending)
  }

  #send(to: string, subject: string, text: string, what: string): Promise<boolean> {
    const mailer = this.#deps.mailer
    if (!mailer) return Promise.resolve(false)
    return sendInBackground(mailer, { to, subject, text }, this.#deps.log, what)
  }

  /**
   * Mails a link that verifies `email` for the user (sign-up, an e-mail change, a resend):
   * following it makes the address the user's and the user `verified`. Links sent earlier
   * stop working, so only the latest address asked for can be confirmed. Past
   * MAIL_LIMITS.verificationsPerHour for the user: 429. Without SMTP: 501.
   */
  async sendVerification(
    user: Pick<User, 'id' | 'name'>,
    email: string,
  ): Promise<{ expiresAt: string }> {
    if (!this.enabled) throw mailUnavailable()
    const { db } = this.#deps
    const issued = await db.transaction().execute(async (tx) => {
      // the count and the new link under the account's lock: concurrent asks cannot pass it
      await lockForTransaction(tx, `statusd:verify-email:${user.id}`)
      await this.assertCanSendVerification(user.id, tx)
      await revokeAuthTokens(tx, this.#clock, user.id, 'verify-email')
      return issueAuthToken(tx, this.#clock, {
        purpose: 'verify-email',
        userId: user.id,
        data: { email },
        lifetimeMs: LINK_LIFETIMES['verify-email'],
      })
    })
    const url = `${this.#deps.linkBase()}/auth/verify/${issued.token}`
    this.#background(
      () =>
        this.#send(
          email,
          'Confirm your e-mail address',
          [
            `Hello ${user.name},`,
            '',
            `To confirm that ${email} is your address on statusd, open this link within 24 hours and press the button it shows:`,
            '',
            url,
            '',
            'If you did not ask for this, ignore this message and do not confirm: someone typed your address, and the account is not yours. To take such an account over, ask for a password reset with this address instead: it ends everything the other person held.',
            '',
          ].join('\n'),
          'e-mail verification',
        ),
      'e-mail verification',
    )
    return { expiresAt: issued.expiresAt }
  }

  /**
   * Says goodbye to a deleted account at its address (docs/accounts.md#delete-your-account):
   * what went, and that the address is free. Nothing without SMTP or an address.
   */
  sendGoodbye(user: { name: string; email: string | null; locale?: string | null }): void {
    const to = user.email
    if (!this.enabled || to === null) return
    // in the language the account had chosen (docs/languages.md), else English
    const tr = translator(user.locale)
    const text = [
      tr('mail.goodbye.greeting', { name: user.name }),
      '',
      tr('mail.goodbye.body', { url: this.#deps.linkBase() }),
      '',
      tr('mail.goodbye.free', { email: to }),
      '',
      tr('mail.goodbye.notYou'),
      '',
    ].join('\n')
    this.#background(() => this.#send(to, tr('mail.goodbye.subject'), text, 'goodbye'), 'goodbye')
  }

  /** 501 without SMTP; 429 when the user had MAIL_LIMITS.verificationsPerHour links this hour. */
  async assertCanSendVerification(userId: string, db: Db = this.#deps.db): Promise<void> {
    if (!this.enabled) throw mailUnavailable()
    const recent = await recentAuthTokens(db, this.#clock, userId, 'verify-email', HOUR)
    if (recent >= MAIL_LIMITS.verificationsPerHour) throw rateLimited(HOUR / 1000)
  }

  /**
   * Follows a verification link: the address it was sent to becomes the user's, confirmed,
   * and the user `verified`, and this browser gets a new session. When the account had no
   * proven address before, this is its owner's first proof: every session, API key and
   * passkey the account had ends (`#endCredentialsIn`), so whoever signed up with the address
   * keeps nothing (docs/accounts.md#e-mail). 404 / 410 for a link that never was / is used or
   * expired; 409 when another account took the address meanwhile (the link stays usable).
   */
  async verifyEmail(token: string, client: ClientMeta = {}): Promise<StartedSession> {
    const { userId, revokedKeys } = await this.#deps.db.transaction().execute(async (tx) => {
      const used = await consumeAuthToken(tx, this.#clock, token, 'verify-email')
      const email = (used.data as { email?: unknown } | null)?.email
      if (used.userId === null || typeof email !== 'string') throw linkGone()
      const before = await userById(tx, used.userId)
      if (!before) throw linkGone()
      // a disabled account: refused, and the link stays unused (docs/operations.md#operators)
      assertEnabled(before)
      await confirmEmailAddress(tx, used.userId, email, new Date(this.#clock.now()).toISOString())
      await recordBy(
        tx,
        requesterFrom(used.userId, client),
        before.email === email ? 'emailVerified' : 'emailChanged',
        used.userId,
        { email, verified: true },
      )
      // note: a proven account confirming a new address keeps its credentials: they were made
      // by whoever proved the old one (docs/accounts.md#e-mail)
      const firstProof = before.email_verified_at === null
      return {
        userId: used.userId,
        revokedKeys: firstProof ? await this.#endCredentialsIn(tx, used.userId) : [],
      }
    })
    await this.#announce(userId, revokedKeys)
    return this.#startSession(userId, 'verify', client)
  }

  /**
   * Ends, in the proof's transaction, every credential the user holds: sessions (and their
   * streams), API keys, passkeys, and the one-time links still open. Returns the keys
   * revoked, for `#announce` once the transaction commits.
   */
  async #endCredentialsIn(tx: Transaction<DB>, userId: string): Promise<string[]> {
    await endSessionsOf(
      { db: tx, ...(this.#deps.holders && { holders: this.#deps.holders }) },
      userId,
      null,
    )
    const keyIds = await revokeKeysOfUserIn(tx, userId)
    await deleteAllPasskeys(tx, userId)
    for (const purpose of LINKS_ENDED_BY_PROOF)
      await revokeAuthTokens(tx, this.#clock, userId, purpose)
    return keyIds
  }

  /** After a proof commits: revoked keys end everywhere, and cached copies of the user go. */
  async #announce(userId: string, revokedKeys: readonly string[]): Promise<void> {
    await announceRevokedKeys(this.#deps.keys ?? {}, revokedKeys)
    this.#deps.holders?.userChanged?.(userId)
  }

  /**
   * Someone asks for a password reset link for `email`. The request is answered (202) before
   * anything is looked up; the rest happens in the background, so neither the answer nor its
   * timing tells whether an account has the address. Past the per-client limit: 429 (the
   * same for every address). Without SMTP: 501 (the same for every address too).
   */
  requestPasswordReset(email: string, clientKey: string): void {
    if (!this.enabled) throw mailUnavailable()
    const now = this.#resetRequests.get(clientKey) ?? { count: 0 }
    if (now.count >= MAIL_LIMITS.resetRequestsPerClient) {
      const left = this.#resetRequests.getRemainingTTL(clientKey)
      throw rateLimited(Math.max(1, Math.ceil(left / 1000)))
    }
    now.count += 1
    if (now.count === 1) this.#resetRequests.set(clientKey, now)
    this.#background(() => this.#mailReset(email), 'password reset')
  }

  /** What a reset request did: for the log and the tests, never for the requester. */
  async #mailReset(email: string): Promise<'sent' | 'failed' | 'unknown' | 'limited'> {
    const { db } = this.#deps
    const user = await userByEmail(db, email)
    if (!user || user.email === null) return 'unknown'
    // note: the count and the new link in one transaction holding the account's lock, so that
    // requests at the same moment (on PostgreSQL, in parallel) cannot all pass the limit
    const issued = await db.transaction().execute(async (tx) => {
      await lockForTransaction(tx, `statusd:password-reset:${user.id}`)
      const lastInterval = await recentAuthTokens(
        tx,
        this.#clock,
        user.id,
        'password-reset',
        MAIL_LIMITS.resetIntervalMs,
      )
      const lastDay = await recentAuthTokens(tx, this.#clock, user.id, 'password-reset', 24 * HOUR)
      if (lastInterval > 0 || lastDay >= MAIL_LIMITS.resetsPerDay) return null
      return issueAuthToken(tx, this.#clock, {
        purpose: 'password-reset',
        userId: user.id,
        // the address the link went to: it works only while that is still the account's
        data: { emailKey: user.email_key },
        lifetimeMs: LINK_LIFETIMES['password-reset'],
      })
    })
    if (issued === null) {
      this.#deps.log.warn({ userId: user.id }, 'password reset not mailed: limit reached')
      return 'limited'
    }
    const url = `${this.#deps.linkBase()}/auth/reset/${issued.token}`
    const sent = await this.#send(
      user.email,
      'Reset your password',
      [
        `Hello ${user.name},`,
        '',
        'Someone (we hope you) asked to reset the password of your statusd account. To choose a new one, open this link within one hour:',
        '',
        url,
        '',
        'Setting a new password signs you out everywhere else.',
        'If you did not ask for this, ignore this message: your password stays as it is.',
        '',
      ].join('\n'),
      'password reset',
    )
    return sent ? 'sent' : 'failed'
  }

  /**
   * Follows a reset link with a new password: the password is set (password rules: 400),
   * the address counts as verified (the link reached it), every session, API key and passkey
   * of the user ends, as does every other one-time link (whoever held the account before
   * the proof keeps nothing: docs/accounts.md#e-mail), and a new session begins for this
   * browser. 404 / 410 for a link that never was / is used or expired, or whose account's
   * address changed since it was sent.
   */
  async resetPassword(
    token: string,
    password: string,
    client: ClientMeta,
  ): Promise<StartedSession> {
    const problem = await passwordProblem(password)
    if (problem !== undefined)
      throw validationError([{ field: 'password', message: problem }], `Password ${problem}`)
    const { db } = this.#deps
    // a link that cannot work fails before the slow hash
    const state = await inspectAuthToken(db, this.#clock, token, 'password-reset')
    if (state === 'unknown') throw linkUnknown()
    if (state !== 'valid') throw linkGone()
    const hash = await (this.#deps.hasher ?? scryptHasher).hash(password)
    const now = new Date(this.#clock.now()).toISOString()
    const { userId, revokedKeys } = await db.transaction().execute(async (tx) => {
      const used = await consumeAuthToken(tx, this.#clock, token, 'password-reset')
      const user = used.userId === null ? undefined : await userById(tx, used.userId)
      const sentTo = (used.data as { emailKey?: unknown } | null)?.emailKey
      if (!user || user.email_key === null || user.email_key !== sentTo) throw linkGone()
      assertEnabled(user)
      await replacePasswordHash(tx, user.id, hash, now)
      await recordBy(tx, requesterFrom(user.id, client), 'passwordReset', user.id, {
        credentialsEnded: true,
      })
      // whoever held a session, a key or a passkey (or knew the old password and made one)
      // is shut out: a reset is how the address's owner takes the account back
      return { userId: user.id, revokedKeys: await this.#endCredentialsIn(tx, user.id) }
    })
    await this.#announce(userId, revokedKeys)
    return this.#startSession(userId, 'reset', client)
  }

  /** Follows an operator's sign-in link (`statusd user link`): a new session. 404 / 410 as above. */
  async signInWithLink(token: string, client: ClientMeta): Promise<StartedSession> {
    const used = await this.#deps.db.transaction().execute(async (tx) => {
      const used = await consumeAuthToken(tx, this.#clock, token, 'sign-in-link')
      // a disabled account: refused, and the link stays unused (docs/operations.md#operators)
      if (used.userId !== null) assertEnabled(await userById(tx, used.userId))
      return used
    })
    if (used.userId === null) throw linkGone()
    return this.#startSession(used.userId, 'link', client)
  }

  async #startSession(userId: string, method: string, client: ClientMeta): Promise<StartedSession> {
    const started = await startSession(this.#deps.db, {
      userId,
      method,
      userAgent: client.userAgent,
      ip: client.ip,
      clock: this.#clock,
    })
    return { ...started, user: await this.userOf(userId) }
  }

  /** The user with this id (404 when gone). */
  async userOf(userId: string): Promise<User> {
    const user = await userById(this.#deps.db, userId)
    if (!user) throw notFound('User not found')
    return user
  }

  /** What state a link is in, for the page it opens (nothing is used). */
  linkState(purpose: AuthTokenPurpose, token: string): Promise<AuthTokenState> {
    return inspectAuthToken(this.#deps.db, this.#clock, token, purpose)
  }
}
