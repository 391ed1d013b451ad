import type { Transaction } from 'kysely'
import type { DB, Db, StatusRow, User } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { writerOf } from '../../db/writer.ts'
import { dateTimeIn, translator } from '../../i18n/i18n.ts'
import { decodePosition, type Page, toPage } from '../../lib/cursor.ts'
import {
  ApiError,
  emailNotVerified,
  forbidden,
  notFound,
  validationError,
} from '../../lib/errors.ts'
import { hashApiKey, newId, newToken } from '../../lib/ids.ts'
import type { MailMessage } from '../../lib/mailer.ts'
import { creationIso, parseIsoInstant } from '../../lib/time.ts'
import { NO_REQUESTER, type Requester, recordBy } from '../audit/security-events.ts'
import { turnOnDefaultRule } from '../outbox/default-rules.service.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { emailKeyOf, emailProblem } from '../users/email-address.ts'
import { userByEmail } from '../users/email-and-password.service.ts'
import { userById } from '../users/users.service.ts'
import {
  deleteRoleInvitationFor,
  deleteRoleInvitationOf,
  findInvitationLinkByHash,
  findRoleInvitationFor,
  findRoleInvitationOf,
  type InvitationLinkRow,
  insertInvitationLink,
  insertInvitationMail,
  invitationMailTimes,
  listInvitationLinks,
  listRoleInvitations,
  type RoleInvitationView,
  replaceRoleInvitation,
  revokeInvitationLink,
  spendInvitationLinkUse,
} from './invitations.repository.ts'
import {
  type CreateInvitationLink,
  DEFAULT_LINK_DAYS,
  type InvitationLink,
  type InvitationLinkPreview,
  type LinkState,
  MAX_LINK_DAYS,
  type RoleInvitation,
} from './invitations.schemas.ts'
import { findRole, type GrantedRole, upsertRole } from './sharing.repository.ts'
import type { StatusUser, Subscription } from './sharing.schemas.ts'
import {
  accessById,
  ownedStatus,
  ownerConflict,
  type PageRequest,
  subscriptionOf,
} from './sharing.service.ts'
import { announcedWrite, type StatusChange } from './status-events.ts'
import { withinReach } from './statuses.access.ts'
import { findStatusById, findStatusByIdForWrite } from './statuses.repository.ts'
import type { Caller } from './statuses.service.ts'
import type { TransferredStatus } from './transfer.schemas.ts'
import { takeOwnership } from './transfer.service.ts'

const DAY_MS = 24 * 60 * 60 * 1000

// a subscriber reads; an updater reads and sets the value: more is higher
const RANK: Record<GrantedRole, number> = { subscriber: 1, updater: 2 }
const atLeast = (held: string, wanted: GrantedRole) => RANK[held as GrantedRole] >= RANK[wanted]

const positionOf = (cursor: string | undefined) =>
  cursor === undefined ? undefined : decodePosition(cursor)

const toRoleInvitation = (row: RoleInvitationView): RoleInvitation => ({
  id: row.id,
  statusId: row.status_id,
  statusName: row.status_name,
  userId: row.user_id,
  role: row.role as RoleInvitation['role'],
  invitedBy: { userId: row.invited_by, name: row.inviter_name },
  createdAt: row.created_at,
})

/** What `PUT …/users/:userId` did: a role set at once, or a pending invitation made. */
export type GrantOutcome =
  | { kind: 'granted'; user: StatusUser }
  | { kind: 'invited'; invitation: RoleInvitation }

/**
 * PUT /v1/status/:statusId/users/:userId — a role is never imposed (docs/accounts.md#invitations):
 * giving a user a role they lack, or raising a subscriber to updater, makes a pending
 * invitation (replacing an earlier one), which they accept or decline. The role they hold
 * already, or a lower one, takes effect at once and withdraws any pending invitation: the
 * owner's latest word counts.
 */
export async function grantRole(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  userId: string,
  role: GrantedRole,
  by?: Requester,
): Promise<GrantOutcome> {
  return writerOf(deps).run(async (tx) => {
    const status = await ownedStatus(tx, caller, statusId)
    const user = await userById(tx, userId)
    if (!user) throw notFound('User not found')
    if (user.id === status.owner_id)
      throw ownerConflict('The owner has every right on their status; the role cannot change')
    const held = await findRole(tx, status.id, user.id)
    if (held && atLeast(held.role, role)) {
      if (held.role !== role) {
        // note: the row keeps its created_at (the grant order); only the role changes
        await upsertRole(tx, {
          status_id: status.id,
          user_id: user.id,
          role,
          created_at: creationIso(),
        })
        await recordBy(tx, by, 'roleChanged', user.id, {
          statusId: status.id,
          role,
          from: held.role,
        })
      }
      await deleteRoleInvitationFor(tx, status.id, user.id)
      return { kind: 'granted', user: { userId: user.id, name: user.name, role } }
    }
    const inviter = await userById(tx, caller.userId)
    const row = {
      id: newId(),
      status_id: status.id,
      user_id: user.id,
      role,
      invited_by: caller.userId,
      created_at: creationIso(),
    }
    await replaceRoleInvitation(tx, row)
    // the role is offered: the user concerned sees it granted, pending their acceptance
    await recordBy(tx, by, 'roleGranted', user.id, {
      statusId: status.id,
      role,
      pending: true,
      ...(held && { from: held.role }),
    })
    return {
      kind: 'invited',
      invitation: toRoleInvitation({
        ...row,
        status_name: status.name,
        inviter_name: inviter?.name ?? '',
      }),
    }
  })
}

/** GET /v1/user/invitations — the invitations waiting for the caller, oldest first. */
export async function listMyInvitations(
  deps: ServiceDeps,
  caller: Caller,
  page: PageRequest,
): Promise<Page<RoleInvitation>> {
  const rows = await listRoleInvitations(
    deps.db,
    {
      userId: caller.userId,
      // a key confined to some statuses sees only their invitations (docs/accounts.md#scoped-keys)
      ...(caller.limits?.statusIds != null && { among: caller.limits.statusIds }),
    },
    {
      after: positionOf(page.cursor),
      limit: page.limit === undefined ? undefined : page.limit + 1,
    },
  )
  return toPage(rows, page.limit, (r) => [r.created_at, r.id], toRoleInvitation)
}

/** The status if the caller owns it: 403 for someone else who sees it, 404 for the rest. */
async function ownStatusForRead(db: Db, caller: Caller, statusId: string): Promise<StatusRow> {
  const { status, role } = await accessById(db, caller, statusId)
  if (role !== 'owner') throw forbidden('Only the owner may see the invitations of this status')
  return status
}

/** GET /v1/status/:statusId/invitations/pending — the owner's pending invitations on a status. */
export async function listPendingInvitations(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  page: PageRequest,
): Promise<Page<RoleInvitation>> {
  const status = await ownStatusForRead(deps.db, caller, statusId)
  const rows = await listRoleInvitations(
    deps.db,
    { statusId: status.id },
    {
      after: positionOf(page.cursor),
      limit: page.limit === undefined ? undefined : page.limit + 1,
    },
  )
  return toPage(rows, page.limit, (r) => [r.created_at, r.id], toRoleInvitation)
}

const invitationNotFound = () => notFound('Invitation not found')

/**
 * POST /v1/user/invitations/:id/accept — the caller takes the role offered (a role they hold
 * that is higher stays). Someone else's invitation is not found (404).
 */
export async function acceptInvitation(
  deps: ServiceDeps,
  caller: Caller,
  id: string,
  by?: Requester,
): Promise<Subscription | TransferredStatus> {
  const { answer } = await announcedWrite(
    deps,
    async (tx): Promise<Accepted> => {
      const invitation = await findRoleInvitationOf(tx, id, caller.userId)
      if (!invitation) throw invitationNotFound()
      // note: the status is locked first, as every change of its roles does, and only then is
      // the invitation taken: a concurrent decline, replacement or second accept finds it gone
      const status = await findStatusByIdForWrite(tx, invitation.status_id)
      if (
        !status ||
        !withinReach(status, caller.limits) ||
        !(await deleteRoleInvitationOf(tx, id, caller.userId))
      )
        throw invitationNotFound()
      // a transfer: the caller takes the status itself (docs/sharing.md#transfer); it reads
      // differently to everyone who sees it, so its streams send it again
      if (invitation.role === 'owner') {
        const taken = await takeOwnership(tx, deps, caller, status, by)
        return {
          answer: taken.answer,
          change: { statusId: status.id, version: taken.version, kind: 'status' },
        }
      }
      const role = invitation.role as GrantedRole
      const held = await raiseRole(tx, status, caller.userId, role)
      await recordBy(tx, by, 'roleAccepted', caller.userId, {
        statusId: status.id,
        role: held,
        via: 'invitation',
      })
      const answer = subscriptionOf(status, held)
      return { answer, change: roleGained(answer) }
    },
    (accepted) => accepted.change,
  )
  return answer
}

/** What accepting an invitation answers, and the change its streams are told of. */
interface Accepted {
  answer: Subscription | TransferredStatus
  change: StatusChange
}

/**
 * The change of a role gained: the user's streams that hid the status (a many-status stream
 * stays open: docs/api.md#one-stream-for-many-statuses) look again. `access` changes are
 * judged on the current row whatever their version.
 */
const roleGained = (subscription: Subscription): StatusChange => ({
  statusId: subscription.statusId,
  version: 0,
  kind: 'access',
})

/**
 * A user who accepted the subscriber role is notified of every change by default
 * (docs/notifications.md#rules). note: the rule row is made here, in the acceptance's
 * transaction, through the outbox module below statuses (statuses may not call
 * notifications, which sits above it).
 */
const notifyNewSubscriber = (tx: Db, statusId: string, userId: string): Promise<boolean> =>
  turnOnDefaultRule(tx, statusId, userId, creationIso())

/** POST /v1/user/invitations/:id/decline — the invitation goes; no role is given. */
export async function declineInvitation(
  deps: ServiceDeps,
  caller: Caller,
  id: string,
): Promise<void> {
  await writerOf(deps).run(async (tx) => {
    const invitation = await findRoleInvitationOf(tx, id, caller.userId)
    const status = invitation && (await findStatusById(tx, invitation.status_id))
    if (
      !status ||
      !withinReach(status, caller.limits) ||
      !(await deleteRoleInvitationOf(tx, id, caller.userId))
    )
      throw invitationNotFound()
  })
}

/** Gives the user the role unless they hold it or a higher one; the role they end up with. */
async function raiseRole(
  tx: Db,
  status: StatusRow,
  userId: string,
  role: GrantedRole,
): Promise<GrantedRole> {
  const held = await findRole(tx, status.id, userId)
  if (held && atLeast(held.role, role)) return held.role as GrantedRole
  await upsertRole(tx, { status_id: status.id, user_id: userId, role, created_at: creationIso() })
  if (role === 'subscriber') await notifyNewSubscriber(tx, status.id, userId)
  return role
}

/** Why a link can no longer be accepted, or `active`. */
export function linkState(link: InvitationLinkRow, nowIso: string): LinkState {
  if (link.revoked_at !== null) return 'revoked'
  if (Number(link.uses_left) <= 0) return 'usedUp'
  if (link.expires_at <= nowIso) return 'expired'
  return 'active'
}

const toInvitationLink = (link: InvitationLinkRow, nowIso: string): InvitationLink => ({
  id: link.id,
  role: link.role as GrantedRole,
  email: link.email_key,
  maxUses: Number(link.max_uses),
  usesLeft: Number(link.uses_left),
  createdAt: link.created_at,
  expiresAt: link.expires_at,
  state: linkState(link, nowIso),
})

/** When a new link ends: the requested time, checked, or DEFAULT_LINK_DAYS from now. */
function linkExpiry(requested: string | undefined, now: number): string {
  if (requested === undefined) return new Date(now + DEFAULT_LINK_DAYS * DAY_MS).toISOString()
  const at = parseIsoInstant(requested)
  const refuse = (message: string) => validationError([{ field: 'expiresAt', message }])
  if (!at) throw refuse('must be an ISO 8601 date or date-time with a zone')
  if (at.getTime() <= now) throw refuse('must be in the future')
  if (at.getTime() > now + MAX_LINK_DAYS * DAY_MS)
    throw refuse(`must be at most ${MAX_LINK_DAYS} days ahead`)
  return at.toISOString()
}

/**
 * Invitation mails (docs/accounts.md#invitation-links): at most `perAddress` an hour to one
 * address and `perInviter` an hour from one inviter; past either, the link is not made.
 */
export const INVITATION_MAIL_LIMITS = { perAddress: 5, perInviter: 20, windowMs: 60 * 60 * 1000 }

/** Rows of sent mails older than a day deleted per new one: the table stays small without a sweeper. */
const MAIL_PRUNE_BATCH = 100

const tooManyInvitationMails = (what: string, retryAfterMs: number) =>
  new ApiError(
    429,
    'rateLimited',
    `Too many invitation mails ${what}: try again later`,
    undefined,
    { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
  )

/**
 * Counts the mail a link bound to `toKey` is about to cause against both limits, and records
 * it, inside the link's transaction. The inviter's lock, then the address's (always in this
 * order, so two requests never wait on each other): concurrent requests on any instance are
 * counted one after another. 429 `rateLimited` with Retry-After: when the oldest mail counted
 * leaves the hour.
 */
async function countInvitationMail(
  tx: Transaction<DB>,
  senderId: string,
  toKey: string,
  now: number,
): Promise<void> {
  const { perAddress, perInviter, windowMs } = INVITATION_MAIL_LIMITS
  const since = new Date(now - windowMs).toISOString()
  await lockForTransaction(tx, `statusd:invitation-mail-from:${senderId}`)
  await lockForTransaction(tx, `statusd:invitation-mail-to:${toKey}`)
  const limits = [
    { by: { column: 'sender_id', value: senderId }, limit: perInviter, what: 'from you this hour' },
    {
      by: { column: 'to_key', value: toKey },
      limit: perAddress,
      what: 'to this address this hour',
    },
  ] as const
  for (const { by, limit, what } of limits) {
    const times = await invitationMailTimes(tx, by, since, limit)
    const oldest = times[0]
    if (times.length >= limit && oldest !== undefined)
      throw tooManyInvitationMails(what, Date.parse(oldest) + windowMs - now)
  }
  await insertInvitationMail(
    tx,
    { id: newId(), to_key: toKey, sender_id: senderId, created_at: new Date(now).toISOString() },
    new Date(now - DAY_MS).toISOString(),
    MAIL_PRUNE_BATCH,
  )
}

/**
 * POST /v1/status/:statusId/invitations — the owner makes a link (docs/accounts.md#invitation-links).
 * The token is returned this once; only its hash is kept. A link bound to an address needs
 * `mail` (the service sends e-mail: the link is mailed there, which is what proves the
 * address at sign-up), and counts against INVITATION_MAIL_LIMITS.
 */
export async function createInvitationLink(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  input: CreateInvitationLink,
  now: number,
  { mail }: { mail: boolean },
): Promise<{
  link: InvitationLink
  token: string
  statusName: string
  inviterEmail: string | null
  /**
   * The language of the mail to `input.email` (docs/languages.md): its account's, when the
   * address has one (null: English), else the inviter's.
   */
  mailLocale: string | null
}> {
  const expiresAt = linkExpiry(input.expiresAt, now)
  const emailIssue = input.email === undefined ? undefined : emailProblem(input.email)
  if (emailIssue) throw validationError([{ field: 'email', message: emailIssue }])
  if (input.email !== undefined && !mail)
    throw validationError(
      [
        {
          field: 'email',
          message:
            'needs e-mail: this service sends none (SMTP_URL), so nothing could prove the address; make a link without one and hand it over',
        },
      ],
      'A link bound to an e-mail address needs the service to send e-mail',
    )
  const { token, hash } = newToken('sdi_')
  return writerOf(deps).run(async (tx) => {
    const status = await ownedStatus(tx, caller, statusId)
    if (input.email !== undefined)
      await countInvitationMail(tx, caller.userId, emailKeyOf(input.email), now)
    const inviter = await userById(tx, caller.userId)
    const invitee = input.email === undefined ? undefined : await userByEmail(tx, input.email)
    const maxUses = input.maxUses ?? 1
    const row = await insertInvitationLink(tx, {
      id: newId(),
      status_id: status.id,
      token_hash: hash,
      role: input.role,
      email_key: input.email === undefined ? null : emailKeyOf(input.email),
      max_uses: maxUses,
      uses_left: maxUses,
      created_by: caller.userId,
      created_at: creationIso(),
      expires_at: expiresAt,
    })
    return {
      link: toInvitationLink(row, new Date(now).toISOString()),
      token,
      statusName: status.name,
      inviterEmail: inviter?.email ?? null,
      // an account's own choice (none: English); for an address no one has, the inviter's
      mailLocale: invitee ? invitee.locale : (inviter?.locale ?? null),
    }
  })
}

/** GET /v1/status/:statusId/invitations — the owner's links, oldest first; never a token. */
export async function listLinks(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  page: PageRequest,
  now: number,
): Promise<Page<InvitationLink>> {
  const status = await ownStatusForRead(deps.db, caller, statusId)
  const rows = await listInvitationLinks(deps.db, status.id, {
    after: positionOf(page.cursor),
    limit: page.limit === undefined ? undefined : page.limit + 1,
  })
  const nowIso = new Date(now).toISOString()
  return toPage(
    rows,
    page.limit,
    (r) => [r.created_at, r.id],
    (r) => toInvitationLink(r, nowIso),
  )
}

/** DELETE /v1/status/:statusId/invitations/:id — revokes a link: it answers 410 from then on. */
export async function revokeLink(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  id: string,
  now: number,
): Promise<void> {
  await writerOf(deps).run(async (tx) => {
    const status = await ownedStatus(tx, caller, statusId)
    if (!(await revokeInvitationLink(tx, status.id, id, new Date(now).toISOString())))
      throw notFound('No such invitation link, or it is revoked already')
  })
}

const gone = (state: LinkState) =>
  new ApiError(
    410,
    'gone',
    state === 'revoked'
      ? 'This invitation was revoked'
      : state === 'usedUp'
        ? 'This invitation has been used up'
        : 'This invitation has expired',
  )

/** The link a token names: 404 for a token no link has (forged, or its status deleted). */
async function linkOf(db: Db, token: string): Promise<InvitationLinkRow> {
  const link = await findInvitationLinkByHash(db, hashApiKey(token))
  if (!link) throw notFound('Invitation not found')
  return link
}

/**
 * GET /v1/invitations/:token — what a link offers, for anyone holding it: the status's name,
 * the inviter's name, the role. 404 forged, 410 expired, used up or revoked.
 */
export async function previewLink(
  deps: ServiceDeps,
  token: string,
  now: number,
): Promise<InvitationLinkPreview> {
  const link = await linkOf(deps.db, token)
  const state = linkState(link, new Date(now).toISOString())
  if (state !== 'active') throw gone(state)
  const [status, inviter] = await Promise.all([
    findStatusById(deps.db, link.status_id),
    userById(deps.db, link.created_by),
  ])
  if (!status) throw notFound('Invitation not found')
  return {
    statusName: status.name,
    inviterName: inviter?.name ?? '',
    role: link.role as GrantedRole,
    expiresAt: link.expires_at,
  }
}

/**
 * Throws unless a new account with this e-mail address could accept the link now: 404 forged,
 * 410 expired, used up or revoked, 403 bound to another address. A sign-up checks this
 * before the password's slow hash; `acceptLinkIn` checks it again, in the transaction.
 * `bound`: the link is bound to this address (it was mailed there: whoever holds it read
 * that mail, or was handed it by the inviter).
 */
export async function assertLinkUsableBy(
  db: Db,
  token: string,
  emailKey: string,
  now: number,
): Promise<{ bound: boolean }> {
  const link = await linkOf(db, token)
  const state = linkState(link, new Date(now).toISOString())
  if (state !== 'active') throw gone(state)
  if (link.email_key !== null && link.email_key !== emailKey) throw otherAddress()
  return { bound: link.email_key !== null }
}

const otherAddress = () => forbidden('This invitation is for another e-mail address')
const unprovenAddress = () =>
  emailNotVerified(
    'This invitation is for a confirmed e-mail address: confirm yours first (follow the link mailed to you), then accept it',
  )

/**
 * Accepts a link for a user inside the caller's transaction (the route's, or a sign-up's, so
 * that a refused link leaves no account behind): the role at once, one use spent, atomically.
 * A role the user holds already (or a higher one) spends nothing and answers it, even once
 * the link has run out, so that accepting twice is harmless. 404 forged; 410 expired, used
 * up or revoked; 403 a link bound to another e-mail address; 409 the owner's own link.
 */
export async function acceptLinkIn(
  tx: Db,
  user: Pick<User, 'id' | 'email_key' | 'email_verified_at'>,
  token: string,
  now: number,
  limits?: Caller['limits'],
  by?: Requester,
): Promise<Subscription> {
  const link = await linkOf(tx, token)
  const status = await findStatusByIdForWrite(tx, link.status_id)
  // a key confined to other statuses cannot reach this one (docs/accounts.md#scoped-keys)
  if (!status || !withinReach(status, limits)) throw notFound('Invitation not found')
  if (status.owner_id === user.id) throw ownerConflict('You own this status')
  if (link.email_key !== null && link.email_key !== user.email_key) throw otherAddress()
  // an address anyone may type (an e-mail change without SMTP, a sign-up not confirmed yet)
  // is not the mailbox the link was sent to (docs/accounts.md#invitation-links)
  if (link.email_key !== null && user.email_verified_at === null) throw unprovenAddress()
  const role = link.role as GrantedRole
  const held = await findRole(tx, status.id, user.id)
  if (held && atLeast(held.role, role)) return subscriptionOf(status, held.role as GrantedRole)
  const nowIso = new Date(now).toISOString()
  const state = linkState(link, nowIso)
  if (state !== 'active') throw gone(state)
  // the last use may have gone to a concurrent accept since the link was read
  if ((await spendInvitationLinkUse(tx, link.id, nowIso)) === undefined) throw gone('usedUp')
  await upsertRole(tx, { status_id: status.id, user_id: user.id, role, created_at: creationIso() })
  // note: a sign-up through the link names no requester: the new user accepted it
  await recordBy(tx, by ?? { ...NO_REQUESTER, actorId: user.id }, 'roleAccepted', user.id, {
    statusId: status.id,
    role,
    via: 'link',
  })
  if (role === 'subscriber') await notifyNewSubscriber(tx, status.id, user.id)
  // a pending invitation that offers no more than this is answered by it
  const pending = await findRoleInvitationFor(tx, status.id, user.id)
  if (pending && atLeast(role, pending.role as GrantedRole))
    await deleteRoleInvitationFor(tx, status.id, user.id)
  return subscriptionOf(status, role)
}

/** POST /v1/invitations/:token/accept — a signed-in caller accepts a link. */
export async function acceptLink(
  deps: ServiceDeps,
  caller: Caller,
  token: string,
  now: number,
  by?: Requester,
): Promise<Subscription> {
  return announcedWrite(
    deps,
    async (tx) => {
      const user = await userById(tx, caller.userId)
      if (!user) throw notFound('User not found')
      return acceptLinkIn(tx, user, token, now, caller.limits, by)
    },
    roleGained,
  )
}

/** What each role lets the invitee do, as the invitation says it. */
const ROLE_WORDS = {
  subscriber: 'mail.invitation.roleSubscriber',
  updater: 'mail.invitation.roleUpdater',
} as const satisfies Record<GrantedRole, string>

/** The message that mails an invitation link to the address it is bound to, in `locale`. */
export function invitationMail(input: {
  to: string
  url: string
  statusName: string
  inviterName: string
  /** The inviter's address, so the invitee knows who asks (null: the inviter has none). */
  inviterEmail: string | null
  link: InvitationLink
  locale: string | null
}): MailMessage {
  const { to, url, statusName, inviterName, inviterEmail, link } = input
  const t = translator(input.locale)
  const origin = new URL(url).origin
  const inviter = inviterEmail === null ? inviterName : `${inviterName} <${inviterEmail}>`
  return {
    to,
    // note: nothing the inviter typed goes in the subject, where a mail list shows it as if
    // the service said it (docs/accounts.md#invitation-links)
    subject: t('mail.invitation.subject'),
    text: [
      t('mail.invitation.intro', {
        inviter,
        origin,
        status: statusName,
        role: t(ROLE_WORDS[link.role]),
      }),
      '',
      t('mail.invitation.accept'),
      url,
      '',
      t('mail.invitation.until', { expiresAt: dateTimeIn(input.locale, link.expiresAt), to }),
      t('mail.invitation.ignore'),
    ].join('\n'),
  }
}
