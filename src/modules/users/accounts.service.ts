import type { Kysely, Transaction } from 'kysely'
import type { DB, User } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { isLanguage, type Language } from '../../i18n/languages.ts'
import type { Clock } from '../../lib/clock.ts'
import {
  forbidden,
  invalidCredentials,
  notFound,
  rateLimited,
  validationError,
} from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { creationIso } from '../../lib/time.ts'
import { recordFailedSignIn } from '../audit/audit.service.ts'
import { type Requester, recordBy } from '../audit/security-events.ts'
import type { Plans } from '../plans/plans.ts'
import { emailKeyOf, emailProblem } from './email-address.ts'
import { emailTaken } from './email-and-password.service.ts'
import type { LoginThrottle } from './login-throttle.ts'
import { accountWords, type PasswordHasher, passwordProblem, scryptHasher } from './passwords.ts'
import { endSessionsOf, type SessionHolders } from './sessions.service.ts'
import { findUserByEmail, findUserById, insertUser, updateUser } from './users.repository.ts'
import { type AuthLevel, assertEnabled, authLevelOf } from './users.service.ts'

// Accounts people make and sign in to themselves (docs/accounts.md#users).

/** What the account services act on. */
export interface AccountDeps {
  db: Kysely<DB>
  plans: Plans
  /** How passwords are hashed and checked (scrypt; tests count the checks). */
  hasher?: PasswordHasher
  /** Failed sign-ins, per account and address. */
  throttle?: LoginThrottle
  clock?: Clock
  /** What is open on sessions that a password change ends. */
  holders?: SessionHolders
}

/** A user's own profile, as `GET /v1/user` shows it. */
export interface ProfileView {
  id: string
  name: string
  email: string | null
  emailVerified: boolean
  plan: string
  authLevel: AuthLevel
  createdAt: string
  hasPassword: boolean
  /** Whether the user is an operator (docs/operations.md#operators). */
  admin: boolean
  /** The language of the user's mails and notifications (null: none chosen). */
  locale: Language | null
}

export const toProfileView = (user: User): ProfileView => ({
  id: user.id,
  name: user.name,
  email: user.email,
  emailVerified: user.email_verified_at !== null,
  plan: user.plan,
  authLevel: authLevelOf(user),
  createdAt: user.created_at,
  hasPassword: user.password_hash !== null,
  admin: Number(user.admin) === 1,
  locale: isLanguage(user.locale) ? user.locale : null,
})

/** The plan people who sign up start on: `free` when there is one, else the first. */
export const signupPlan = (plans: Plans): string =>
  Object.hasOwn(plans, 'free') ? 'free' : (Object.keys(plans)[0] as string)

/** A new e-mail address must be one (docs/accounts.md#users): 400 otherwise. */
function assertEmail(email: string): void {
  const problem = emailProblem(email)
  if (problem !== undefined)
    throw validationError([{ field: 'email', message: problem }], `E-mail address ${problem}`)
}

async function assertPassword(
  password: string,
  field: string,
  userInputs: string[],
): Promise<void> {
  const problem = await passwordProblem(password, userInputs)
  if (problem !== undefined)
    throw validationError([{ field, message: problem }], `Password ${problem}`)
}

/** Holds the e-mail's folded form for the rest of the transaction (sign-up, e-mail change). */
const lockEmail = (tx: Parameters<typeof lockForTransaction>[0], emailKey: string) =>
  lockForTransaction(tx, `statusd:email:${emailKey}`)

/**
 * Creates an account with a password (sign-up, docs/accounts.md#signing-up). The e-mail must
 * be no one else's, compared case-insensitively (409 `conflict`); the password must pass the
 * password rules (400). `verified`: whether the account starts `verified` (no e-mail to
 * verify with, or an invitation vouches) or `authenticated`. `alongside` runs in the
 * transaction that creates the account (an invitation's role): if it throws, there is no
 * account.
 */
export async function signUp(
  deps: AccountDeps,
  input: {
    email: string
    name: string
    password: string
    verified: boolean
    plan?: string
    /** When the address was proven (a link mailed to it), if it was. */
    emailVerifiedAt?: string | null
  },
  alongside?: (tx: Transaction<DB>, user: User) => Promise<void>,
): Promise<User> {
  assertEmail(input.email)
  await assertPassword(input.password, 'password', accountWords(input.email, input.name))
  const emailKey = emailKeyOf(input.email)
  // a taken address is refused before the slow hash
  if (await findUserByEmail(deps.db, input.email)) throw emailTaken()
  const passwordHash = await (deps.hasher ?? scryptHasher).hash(input.password)
  return deps.db.transaction().execute(async (tx) => {
    // two sign-ups with one address at once: one gets the account, the other 409
    await lockEmail(tx, emailKey)
    if (await findUserByEmail(tx, input.email)) throw emailTaken()
    const user = await insertUser(tx, {
      id: newId(),
      name: input.name,
      email: input.email,
      email_key: emailKey,
      plan: input.plan ?? signupPlan(deps.plans),
      verified: input.verified ? 1 : 0,
      created_at: creationIso(),
      password_hash: passwordHash,
      email_verified_at: input.emailVerifiedAt ?? null,
    })
    await alongside?.(tx, user)
    return user
  })
}

/**
 * The user an e-mail and password belong to (docs/accounts.md#signing-in). A wrong e-mail
 * and a wrong password get the same 401 `invalidCredentials` after the same work: an unknown
 * e-mail is checked against a dummy hash. The attempt is counted against the account and the
 * address before its password is judged; past either limit, 429 `rateLimited` and no hash.
 */
export async function signIn(
  deps: AccountDeps,
  input: { email: string; password: string; ip: string; userAgent?: string | undefined },
): Promise<User> {
  const emailKey = emailKeyOf(input.email)
  const wait = deps.throttle?.attempt(emailKey, input.ip) ?? 0
  if (wait > 0) throw rateLimited(wait)
  const hasher = deps.hasher ?? scryptHasher
  let user: User | undefined
  let matches: boolean
  try {
    user = await findUserByEmail(deps.db, input.email)
    const stored = user?.password_hash ?? (await hasher.dummyHash())
    matches = await hasher.verify(stored, input.password)
  } catch (error) {
    // no password was judged (the hash pool was full, the database failed): not an attempt
    deps.throttle?.refund(emailKey, input.ip)
    throw error
  }
  if (!user || user.password_hash === null || !matches) {
    // the address typed is not stored: an unknown one is recorded with no account
    // (docs/security.md#security-log)
    await recordFailedSignIn(deps.db, {
      userId: user?.id ?? null,
      ip: input.ip,
      userAgent: input.userAgent ?? null,
      detail: {
        method: 'password',
        reason: !user
          ? 'unknownAddress'
          : user.password_hash === null
            ? 'noPassword'
            : 'wrongPassword',
      },
    })
    throw invalidCredentials()
  }
  deps.throttle?.succeeded(emailKey, input.ip)
  // the right password of a disabled account: told so, nothing more (docs/operations.md#operators)
  assertEnabled(user)
  return user
}

async function userOrNotFound(db: Kysely<DB>, userId: string): Promise<User> {
  const user = await findUserById(db, userId)
  if (!user) throw notFound('User not found')
  return user
}

/** The caller's profile. */
export async function profileOf(db: Kysely<DB>, userId: string): Promise<ProfileView> {
  return toProfileView(await userOrNotFound(db, userId))
}

/**
 * Checks the password a signed-in user gives to confirm a change (a new password, deleting
 * the account): when wrong, 403 `forbidden`, not 401 (the caller is signed in, and a 401
 * would tell a client its session has ended), with `field` named; wrong guesses count against
 * the account's sign-in failures and are recorded as failed sign-ins, so a stolen session
 * cannot try passwords faster than a sign-in could.
 */
export async function assertCurrentPassword(
  deps: Pick<AccountDeps, 'db' | 'hasher' | 'throttle'>,
  user: Pick<User, 'id' | 'email_key' | 'password_hash'>,
  password: string,
  client: { field: string; ip: string; userAgent: string | null; reason: string },
): Promise<void> {
  const { field, ip } = client
  if (user.password_hash === null)
    throw forbidden('Your account has no password: confirm with a passkey', [
      { field, message: 'your account has no password' },
    ])
  const hasher = deps.hasher ?? scryptHasher
  const key = user.email_key ?? `id ${user.id}`
  // counted before it is judged, as a sign-in is
  const wait = deps.throttle?.attempt(key, ip) ?? 0
  if (wait > 0) throw rateLimited(wait)
  let matches: boolean
  try {
    matches = await hasher.verify(user.password_hash, password)
  } catch (error) {
    deps.throttle?.refund(key, ip)
    throw error
  }
  // words for a person; the field a program looks for is in `errors`
  if (!matches) {
    // a wrong guess from a signed-in session: the password was tried, as at sign-in
    await recordFailedSignIn(deps.db, {
      userId: user.id,
      actorId: user.id,
      ip,
      userAgent: client.userAgent,
      detail: { method: 'password', reason: client.reason },
    })
    throw forbidden(
      field === 'currentPassword' ? 'The current password is wrong' : 'The password is wrong',
      [{ field, message: 'is not your current password' }],
    )
  }
  // a right one costs nothing, as before this count came first
  deps.throttle?.refund(key, ip)
}

/** `assertCurrentPassword` for the user with this id (404 when there is none). */
export async function confirmPassword(
  deps: Pick<AccountDeps, 'db' | 'hasher' | 'throttle'>,
  userId: string,
  password: string,
  client: { field: string; ip: string; userAgent: string | null; reason: string },
): Promise<void> {
  await assertCurrentPassword(deps, await userOrNotFound(deps.db, userId), password, client)
}

/**
 * Changes the caller's name, e-mail, password or language (docs/accounts.md#users). A new password
 * needs the current one: when wrong, 403 `forbidden`, not 401 (the caller is signed in, and a
 * 401 would tell a client its session has ended); wrong guesses count against the account's
 * sign-in failures, so a stolen session cannot try passwords faster than a sign-in could. It
 * ends the user's other sessions. `currentSessionId`: the session
 * making the change, kept (null: a key made it, every session ends); `ip`: the caller's address.
 */
export async function changeProfile(
  deps: AccountDeps,
  caller: { userId: string; currentSessionId: string | null; ip: string; requester?: Requester },
  changes: {
    name?: string
    email?: string
    password?: string
    currentPassword?: string
    locale?: Language | null
  },
  {
    deferEmail = false,
  }: {
    /**
     * A new address is not stored but checked and returned as `pendingEmail`: with SMTP it
     * becomes the user's only when the link mailed to it is followed (docs/accounts.md#e-mail).
     */
    deferEmail?: boolean
  } = {},
): Promise<{ profile: ProfileView; emailChanged: boolean; pendingEmail?: string }> {
  const { userId, currentSessionId, ip } = caller
  if (changes.email !== undefined) assertEmail(changes.email)
  const user = await userOrNotFound(deps.db, userId)
  let passwordHash: string | undefined
  if (changes.password !== undefined) {
    const hasher = deps.hasher ?? scryptHasher
    if (user.password_hash !== null) {
      if (changes.currentPassword === undefined)
        throw validationError(
          [{ field: 'currentPassword', message: 'is required to change the password' }],
          'A new password needs the current one',
        )
      await assertCurrentPassword(deps, user, changes.currentPassword, {
        field: 'currentPassword',
        ip,
        userAgent: caller.requester?.userAgent ?? null,
        reason: 'wrongCurrentPassword',
      })
    }
    // note: after the current password: a stolen session's guesses are throttled before any
    // other work is done for them
    await assertPassword(
      changes.password,
      'password',
      accountWords(changes.email ?? user.email, changes.name ?? user.name),
    )
    passwordHash = await hasher.hash(changes.password)
  }
  const emailKey = changes.email === undefined ? undefined : emailKeyOf(changes.email)
  // only another address waits for its link; the same one in other letter case is stored
  const pendingEmail =
    deferEmail && changes.email !== undefined && emailKey !== user.email_key
      ? changes.email
      : undefined
  const emailChanged =
    pendingEmail === undefined && changes.email !== undefined && changes.email !== user.email
  const updated = await deps.db.transaction().execute(async (tx) => {
    if (emailKey !== undefined && emailKey !== user.email_key) {
      await lockEmail(tx, emailKey)
      if (await findUserByEmail(tx, emailKey)) throw emailTaken()
    }
    const set = {
      ...(changes.name !== undefined && { name: changes.name }),
      ...(changes.email !== undefined &&
        pendingEmail === undefined && {
          email: changes.email,
          email_key: emailKey,
          // a new address is not verified, whatever the old one was
          ...(emailKey !== user.email_key && { email_verified_at: null }),
        }),
      ...(passwordHash !== undefined && { password_hash: passwordHash }),
      ...(changes.locale !== undefined && { locale: changes.locale }),
    }
    const by = caller.requester
    if (passwordHash !== undefined)
      await recordBy(tx, by, 'passwordChanged', userId, { otherSessionsEnded: true })
    if (emailChanged) await recordBy(tx, by, 'emailChanged', userId, { email: changes.email })
    // note: nothing to store when the only change is an address waiting for its link
    return Object.keys(set).length > 0 ? updateUser(tx, userId, set) : findUserById(tx, userId)
  })
  if (!updated) throw notFound('User not found')
  // a new address unverified the user: their keys cached anywhere must say so at once
  if (user.email_verified_at !== null && updated.email_verified_at === null)
    deps.holders?.userChanged?.(userId)
  // a changed password ends every other session: whoever knew the old one is signed out
  if (passwordHash !== undefined)
    await endSessionsOf({ db: deps.db, holders: deps.holders }, userId, currentSessionId)
  return {
    profile: toProfileView(updated),
    emailChanged,
    ...(pendingEmail !== undefined && { pendingEmail }),
  }
}
