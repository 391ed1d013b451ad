import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { type Writer, writerOf } from '../../db/writer.ts'
import type { Clock } from '../../lib/clock.ts'
import { decodePosition, type Page, toPage } from '../../lib/cursor.ts'
import { conflict, notFound, UserInputError, validationError } from '../../lib/errors.ts'
import { deleteAccount } from '../accounts/account-deletion.service.ts'
import { recordSecurityEvent } from '../audit/security-events.ts'
import { dropAdminScopeIn } from '../keys/keys.service.ts'
import type { Plans } from '../plans/plans.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { issueAuthToken } from '../users/auth-tokens.service.ts'
import { emailKeyOf, emailProblem } from '../users/email-address.ts'
import { endSessionsOf } from '../users/sessions.service.ts'
import { SIGN_IN_LINK_LIFETIME_MS, signInLinkUrl } from '../users/sign-in-links.service.ts'
import {
  type AuthLevel,
  assertOtherOperator,
  authLevelOf,
  createUser,
  lockOperators,
  userById,
} from '../users/users.service.ts'
import {
  type AdminUserRow,
  countPendingOutboxEvents,
  countUsers,
  findUserForAdmin,
  hasPushKeys,
  listUsersForAdmin,
} from './admin.repository.ts'

// The operators' API (docs/operations.md#operators): the users of the instance, what an
// operator may change about them, invitations, and the instance's own state.

/** A user as the operators' list shows it. */
export interface AdminUserView {
  id: string
  name: string
  email: string | null
  plan: string
  authLevel: AuthLevel
  admin: boolean
  disabled: boolean
  disabledAt: string | null
  emailVerified: boolean
  createdAt: string
  /** Statuses the user owns. */
  statusCount: number
  /** When the user's latest session began (null: no session now). */
  lastSignInAt: string | null
}

export const toAdminUserView = (row: AdminUserRow): AdminUserView => ({
  id: row.id,
  name: row.name,
  email: row.email,
  plan: row.plan,
  authLevel: authLevelOf(row),
  admin: Number(row.admin) === 1,
  disabled: row.disabled_at !== null,
  disabledAt: row.disabled_at,
  emailVerified: row.email_verified_at !== null,
  createdAt: row.created_at,
  statusCount: Number(row.status_count),
  lastSignInAt: row.last_sign_in_at ?? null,
})

/** Who acts, and from where: what the security log records of each action. */
export interface Actor {
  userId: string
  ip?: string | undefined
  userAgent?: string | undefined
}

/** What the operators' services act on. */
export interface AdminDeps {
  db: Kysely<DB>
  writer?: Writer
  plans: Plans
  clock: Clock
  /** The statuses' services: a deleted user's statuses are announced gone through them. */
  statuses: ServiceDeps
  /**
   * After a user's standing changed (disabled, demoted, deleted) and it committed: this
   * instance forgets the user's cached keys and checks its open streams, and every instance
   * is told to (the credentials bus).
   */
  userChanged(userId: string): void
  /** After keys were revoked (the scope `admin` was all they held), once it committed. */
  keysRevoked(keyIds: readonly string[]): Promise<void>
}

/** The users page's default and largest size. */
export const USER_PAGE = { default: 50, max: 200 } as const

/** The most characters of a search. */
export const MAX_SEARCH_LENGTH = 100

const userNotFound = () => notFound('User not found')

/**
 * GET /v1/admin/users — users in creation order, a page at a time; `q`: only those whose
 * name or e-mail address holds it (case-insensitively).
 */
export async function listUsers(
  deps: Pick<AdminDeps, 'db'>,
  query: { q?: string | undefined; limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<AdminUserView>> {
  const limit = query.limit ?? USER_PAGE.default
  const search = query.q?.trim().toLowerCase()
  const rows = await listUsersForAdmin(deps.db, {
    ...(search !== undefined && search !== '' && { search }),
    after: query.cursor === undefined ? undefined : decodePosition(query.cursor),
    limit: limit + 1,
  })
  return toPage(rows, limit, (r) => [r.created_at, r.id], toAdminUserView)
}

/** GET /v1/admin/users/:userId — one user (404 when there is none). */
export async function getUser(deps: Pick<AdminDeps, 'db'>, userId: string): Promise<AdminUserView> {
  const row = await findUserForAdmin(deps.db, userId)
  if (!row) throw userNotFound()
  return toAdminUserView(row)
}

/** What an operator may change about a user (PATCH /v1/admin/users/:userId). */
export interface UserChanges {
  plan?: string | undefined
  verified?: boolean | undefined
  admin?: boolean | undefined
  disabled?: boolean | undefined
}

/**
 * PATCH /v1/admin/users/:userId — plan, verified, admin, disabled; each change is recorded
 * in the security log. Disabling ends every session of the user and every stream opened with
 * their keys or sessions, on every instance; their keys answer 401 until they are enabled
 * again. Taking `admin` away also takes the scope `admin` from their keys. 409 when it would
 * leave no enabled operator.
 */
export async function changeUser(
  deps: AdminDeps,
  actor: Actor,
  userId: string,
  changes: UserChanges,
): Promise<AdminUserView> {
  if (changes.plan !== undefined && !Object.hasOwn(deps.plans, changes.plan))
    throw validationError([
      {
        field: 'plan',
        message: `must be one of the plans: ${Object.keys(deps.plans).join(', ')}`,
      },
    ])
  const nowIso = new Date(deps.clock.now()).toISOString()
  const { revokedKeys, standingChanged } = await writerOf(deps).run(async (tx) => {
    const losesOperator = changes.admin === false || changes.disabled === true
    if (losesOperator) await lockOperators(tx)
    const user = await userById(tx, userId)
    if (!user) throw userNotFound()
    const isAdmin = Number(user.admin) === 1
    const isDisabled = user.disabled_at !== null
    // an operator demoted or disabled needs another enabled one left (409)
    if ((changes.admin === false && isAdmin) || (changes.disabled === true && !isDisabled))
      await assertOtherOperator(tx, user)
    const record = (kind: string, detail: Record<string, unknown>) =>
      recordSecurityEvent(
        tx,
        { kind, userId, actorId: actor.userId, ip: actor.ip, userAgent: actor.userAgent, detail },
        nowIso,
      )
    const set: Partial<{
      plan: string
      verified: number
      admin: number
      disabled_at: string | null
      email_verified_at: string
    }> = {}
    let revoked: string[] = []
    let standing = false
    if (changes.plan !== undefined && changes.plan !== user.plan) {
      set.plan = changes.plan
      standing = true
      await record('admin.planChanged', { from: user.plan, to: changes.plan })
    }
    if (changes.verified !== undefined && changes.verified !== (Number(user.verified) === 1)) {
      set.verified = changes.verified ? 1 : 0
      // the operator vouches for the address of a user they verify, as the CLI does
      // (docs/operations.md#users)
      if (changes.verified && user.email !== null && user.email_verified_at === null)
        set.email_verified_at = nowIso
      standing = true
      await record(changes.verified ? 'admin.userVerified' : 'admin.userUnverified', {})
    }
    if (changes.admin !== undefined && changes.admin !== isAdmin) {
      set.admin = changes.admin ? 1 : 0
      if (!changes.admin) revoked = await dropAdminScopeIn(tx, userId)
      standing = true
      await record(changes.admin ? 'admin.adminGranted' : 'admin.adminRevoked', {})
    }
    if (changes.disabled !== undefined && changes.disabled !== isDisabled) {
      set.disabled_at = changes.disabled ? nowIso : null
      // every session ends now; enabled again, the user signs in anew
      if (changes.disabled) await endSessionsOf({ db: tx }, userId, null)
      standing = true
      await record(changes.disabled ? 'admin.userDisabled' : 'admin.userEnabled', {})
    }
    if (Object.keys(set).length > 0)
      await tx.updateTable('users').set(set).where('id', '=', userId).execute()
    return { revokedKeys: revoked, standingChanged: standing }
  })
  await deps.keysRevoked(revokedKeys)
  if (standingChanged) deps.userChanged(userId)
  return getUser(deps, userId)
}

/**
 * DELETE /v1/admin/users/:userId — the user and everything theirs, as when they delete their
 * own account (`deleteAccount`, docs/accounts.md#delete-your-account). 409 for the last
 * enabled operator. Recorded in the security log as `admin.userDeleted`, which it keeps.
 */
export async function deleteUser(deps: AdminDeps, actor: Actor, userId: string): Promise<void> {
  await deleteAccount(deps, userId, {
    kind: 'admin.userDeleted',
    actorId: actor.userId,
    ip: actor.ip,
    userAgent: actor.userAgent,
  })
}

/** A one-time sign-in link an operator hands over. */
export interface AdminSignInLink {
  url: string
  expiresAt: string
}

/**
 * POST /v1/admin/users/:userId/sign-in-link — a one-time sign-in link for the user, as
 * `statusd user link` prints: the way in for someone without a password or e-mail. A disabled
 * user's link is refused when followed.
 */
export async function makeSignInLink(
  deps: AdminDeps,
  actor: Actor,
  userId: string,
  linkBase: string,
): Promise<AdminSignInLink> {
  const issued = await writerOf(deps).run(async (tx) => {
    const user = await userById(tx, userId)
    if (!user) throw userNotFound()
    const issued = await issueAuthToken(tx, deps.clock, {
      purpose: 'sign-in-link',
      userId,
      lifetimeMs: SIGN_IN_LINK_LIFETIME_MS,
    })
    await recordSecurityEvent(tx, {
      kind: 'admin.signInLinkCreated',
      userId,
      actorId: actor.userId,
      ip: actor.ip,
      userAgent: actor.userAgent,
      detail: { expiresAt: issued.expiresAt },
    })
    return issued
  })
  return { url: signInLinkUrl(linkBase, issued.token), expiresAt: issued.expiresAt }
}

/** How long the sign-in link of an invitation works. */
export const INVITATION_LINK_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000

/** What POST /v1/admin/invitations made. */
export interface AdminInvitation {
  user: AdminUserView
  /** Whether the link was mailed to the address (SMTP is set). */
  mailed: boolean
  /** The link, when it was not mailed: the operator hands it over. */
  url: string | null
  expiresAt: string
}

/**
 * POST /v1/admin/invitations — an operator invites someone by e-mail address: their account
 * is made at once (verified, the address vouched for by the operator, no password) and a
 * one-time sign-in link to it, valid INVITATION_LINK_LIFETIME_MS, is mailed there when the
 * service sends e-mail; without SMTP the link is in the answer for the operator to hand over.
 * Once in, the person sets a password or adds a passkey. 409 when an account has the address.
 */
export async function inviteUser(
  deps: AdminDeps,
  actor: Actor,
  input: { email: string; name?: string | undefined; plan?: string | undefined },
  { mail, linkBase }: { mail: boolean; linkBase: string },
): Promise<{ invitation: AdminInvitation; url: string }> {
  const email = input.email.trim()
  const problem = emailProblem(email)
  if (problem) throw validationError([{ field: 'email', message: problem }])
  const plan = input.plan ?? defaultPlan(deps.plans)
  if (!Object.hasOwn(deps.plans, plan))
    throw validationError([
      { field: 'plan', message: `must be one of the plans: ${Object.keys(deps.plans).join(', ')}` },
    ])
  const name = input.name?.trim() || nameFromAddress(email)
  const { userId, issued } = await writerOf(deps).run(async (tx) => {
    // the address's lock, as sign-up and a confirmed change take it: two accounts made for
    // one address at once on any instance, the second finds the first (409)
    await lockForTransaction(tx, `statusd:email:${emailKeyOf(email)}`)
    let user: Awaited<ReturnType<typeof createUser>>
    try {
      user = await createUser(tx, deps.plans, { name, email, plan, verified: true })
    } catch (err) {
      if (!(err instanceof UserInputError)) throw err
      if (err.message.endsWith(' exists'))
        throw conflict('An account has this e-mail address already')
      throw validationError([{ field: 'name', message: err.message.replace(/^name /, '') }])
    }
    const issued = await issueAuthToken(tx, deps.clock, {
      purpose: 'sign-in-link',
      userId: user.id,
      lifetimeMs: INVITATION_LINK_LIFETIME_MS,
    })
    await recordSecurityEvent(tx, {
      kind: 'admin.userInvited',
      userId: user.id,
      actorId: actor.userId,
      ip: actor.ip,
      userAgent: actor.userAgent,
      detail: { email, plan, mailed: mail },
    })
    return { userId: user.id, issued }
  })
  const url = signInLinkUrl(linkBase, issued.token)
  return {
    invitation: {
      user: await getUser(deps, userId),
      mailed: mail,
      url: mail ? null : url,
      expiresAt: issued.expiresAt,
    },
    url,
  }
}

/** The plan an invited person starts on: `free` when there is one, else the first. */
const defaultPlan = (plans: Plans): string =>
  Object.hasOwn(plans, 'free') ? 'free' : (Object.keys(plans)[0] as string)

/** A name for someone known only by their address: its part before the @, at most 60 characters. */
const nameFromAddress = (email: string): string =>
  [...(email.split('@')[0] || email)].slice(0, 60).join('')

/** The message that invites someone: their link, and what it does. */
export function invitationMessage(input: {
  to: string
  url: string
  inviterName: string
  serviceUrl: string
}): { to: string; subject: string; text: string } {
  return {
    to: input.to,
    subject: "You're invited to statusd",
    text: [
      'Hello,',
      '',
      `${input.inviterName} made you an account on the statusd service at ${input.serviceUrl}. To sign in, open this link within 7 days:`,
      '',
      input.url,
      '',
      'The link works once. Once in, set a password or add a passkey in Account, to sign in again later.',
      'If you did not expect this, ignore this message.',
      '',
    ].join('\n'),
  }
}

/** The instance as GET /v1/admin/instance shows it. */
export interface InstanceView {
  version: string
  engine: string
  databaseBytes: number | null
  startedAt: string
  uptimeSeconds: number
  signup: 'invite' | 'open'
  smtp: boolean
  push: boolean
  mqtt: boolean
  outboxBacklog: number
  openStreams: number
  users: number
}

/** What the instance knows of itself, beside what it reads from storage. */
export interface InstanceFacts {
  version: string
  engine: string
  sizeBytes?: (() => Promise<number>) | undefined
  startedAt: number
  signup: 'invite' | 'open'
  smtp: boolean
  /** The MQTT bridge is set up (MQTT_URL is set). */
  mqtt: boolean
  openStreams: () => number
}

/** GET /v1/admin/instance — the version, storage, configuration and load of this instance. */
export async function instanceInfo(
  deps: Pick<AdminDeps, 'db' | 'clock'>,
  facts: InstanceFacts,
): Promise<InstanceView> {
  const [databaseBytes, outboxBacklog, push, users] = await Promise.all([
    facts.sizeBytes ? facts.sizeBytes() : Promise.resolve(null),
    countPendingOutboxEvents(deps.db),
    hasPushKeys(deps.db),
    countUsers(deps.db),
  ])
  const now = deps.clock.now()
  return {
    version: facts.version,
    engine: facts.engine,
    databaseBytes,
    startedAt: new Date(facts.startedAt).toISOString(),
    uptimeSeconds: Math.max(0, Math.floor((now - facts.startedAt) / 1000)),
    signup: facts.signup,
    smtp: facts.smtp,
    push,
    mqtt: facts.mqtt,
    outboxBacklog,
    openStreams: facts.openStreams(),
    users,
  }
}
