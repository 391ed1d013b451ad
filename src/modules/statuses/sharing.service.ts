import type { Db, StatusRow } from '../../db/database.ts'
import { decodePosition, type Page, toPage } from '../../lib/cursor.ts'
import { ApiError, forbidden, notFound } from '../../lib/errors.ts'
import { creationIso } from '../../lib/time.ts'
import { type Requester, recordBy } from '../audit/security-events.ts'
import { removeRule, turnOnDefaultRule } from '../outbox/default-rules.service.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { userById } from '../users/users.service.ts'
import { deleteRoleInvitationFor } from './invitations.repository.ts'
import {
  deleteRole,
  findRole,
  type GrantedRole,
  insertRoleUnlessPresent,
  listRoleHolders,
  listSubscribedStatuses,
  roleHolderIds,
  type SubscriptionRow,
} from './sharing.repository.ts'
import type { StatusUser, Subscription } from './sharing.schemas.ts'
import { announcedWrite, type StatusChange } from './status-events.ts'
import { assertMayReadDetail, assertVisible, type Role, roleOn } from './statuses.access.ts'
import {
  findStatusById,
  findStatusByIdForWrite,
  reachableStatusIds,
} from './statuses.repository.ts'
import type { AccessLevel } from './statuses.schemas.ts'
import type { Caller } from './statuses.service.ts'

/** A status together with what the caller is to it (null: no role, or anonymous). */
export interface StatusAccess {
  status: StatusRow
  role: Role | null
}

// note: 409, not 400: the request is well-formed; it clashes with who owns the status
export const ownerConflict = (message: string) => new ApiError(409, 'conflict', message)

/**
 * The status by id as the caller sees it: 404 when it does not exist or is hidden from them.
 * `forWrite` reads it to be written in this transaction: on PostgreSQL the row stays locked,
 * so a concurrent delete waits for this transaction's roles, or this one sees it gone (404).
 * Unlocked, a role inserted for a status deleted meanwhile broke its foreign key (500).
 */
export async function accessById(
  db: Db,
  caller: Caller | null,
  statusId: string,
  { forWrite = false } = {},
): Promise<StatusAccess> {
  const status = await (forWrite ? findStatusByIdForWrite : findStatusById)(db, statusId)
  const role = status ? await roleOn(db, status, caller?.userId ?? null) : null
  return { status: assertVisible(status, role, caller?.limits), role }
}

/**
 * The status the caller is about to share (locked, as `accessById` forWrite): 403 unless they
 * own it, 404 when they cannot see it.
 */
export async function ownedStatus(db: Db, caller: Caller, statusId: string): Promise<StatusRow> {
  const { status, role } = await accessById(db, caller, statusId, { forWrite: true })
  if (role !== 'owner') throw forbidden('Only the owner may share this status')
  return status
}

/** Ids of the users with a granted role on the status (live streams check visibility by them). */
export async function roleHolders(db: Db, statusId: string): Promise<Set<string>> {
  return new Set(await roleHolderIds(db, statusId))
}

// note: a subscription is to a status someone else owns, and a status key is its owner's
// alone (docs/api.md#the-status-object): always null here
const toSubscription = (row: SubscriptionRow): Subscription => ({
  statusId: row.id,
  statusKey: null,
  shareId: row.share_id,
  name: row.name,
  role: row.role as GrantedRole,
})

export const subscriptionOf = (status: StatusRow, role: GrantedRole): Subscription => ({
  statusId: status.id,
  statusKey: null,
  shareId: status.share_id,
  name: status.name,
  role,
})

/**
 * DELETE /v1/status/:statusId/users/:userId — the owner revokes a granted role, at once, and
 * withdraws a pending invitation of the user (docs/accounts.md#invitations): 404 when there
 * was neither.
 */
export async function revokeRole(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  userId: string,
  by?: Requester,
): Promise<void> {
  // live streams of the user re-check whether they may still see the status
  await announcedWrite(
    deps,
    async (tx) => {
      const status = await ownedStatus(tx, caller, statusId)
      if (userId === status.owner_id) throw ownerConflict('The owner cannot be removed')
      const withdrawn = await deleteRoleInvitationFor(tx, status.id, userId)
      const removed = await deleteRole(tx, status.id, userId)
      if (!removed && !withdrawn)
        throw notFound('That user has no role or invitation on this status')
      // whoever is removed from a status is no longer told about it (docs/notifications.md#rules)
      if (removed) await removeRule(tx, status.id, userId)
      await recordBy(tx, by, 'roleRemoved', userId, {
        statusId: status.id,
        ...(!removed && { pending: true }),
      })
      return status
    },
    accessChanged,
  )
}

/** The change of a role taken away: streams re-check access; the status itself is as it was. */
const accessChanged = (status: StatusRow): StatusChange => ({
  statusId: status.id,
  version: Number(status.version),
  kind: 'access',
})

/**
 * POST /v1/status/:statusId/subscription — follow a status you can see. A public status
 * makes you a subscriber (created); a role you hold already is kept as it is.
 */
export async function subscribe(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
): Promise<{ subscription: Subscription; created: boolean }> {
  // a new subscriber shows in a public user list (the share page: its render cache
  // forgets it); nothing else changed
  const done = await announcedWrite(
    deps,
    async (tx) => {
      const { status, role } = await accessById(tx, caller, statusId, { forWrite: true })
      if (role === 'owner') throw ownerConflict('You own this status')
      if (role !== null)
        return { status, subscription: subscriptionOf(status, role), created: false }
      const inserted = await insertRoleUnlessPresent(tx, {
        status_id: status.id,
        user_id: caller.userId,
        role: 'subscriber',
        created_at: creationIso(),
      })
      if (inserted) {
        // a new subscriber is notified of every change by default (docs/notifications.md#rules)
        await turnOnDefaultRule(tx, status.id, caller.userId, creationIso())
        return { status, subscription: subscriptionOf(status, 'subscriber'), created: true }
      }
      // a concurrent request of the same user subscribed first
      const now = await findRole(tx, status.id, caller.userId)
      return {
        status,
        subscription: subscriptionOf(status, (now?.role ?? 'subscriber') as GrantedRole),
        created: false,
      }
    },
    (done) => (done.created ? accessChanged(done.status) : null),
  )
  return { subscription: done.subscription, created: done.created }
}

/**
 * DELETE /v1/status/:statusId/subscription — leave a status: removes the caller's own
 * role, subscriber or updater. The owner cannot leave (409).
 */
export async function unsubscribe(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  by?: Requester,
): Promise<void> {
  await announcedWrite(
    deps,
    async (tx) => {
      const { status, role } = await accessById(tx, caller, statusId, { forWrite: true })
      if (role === 'owner') throw ownerConflict('You own this status')
      if (role === null || !(await deleteRole(tx, status.id, caller.userId)))
        throw notFound('You do not follow this status')
      // leaving a status ends its notifications too (docs/notifications.md#rules)
      await removeRule(tx, status.id, caller.userId)
      await recordBy(tx, by, 'roleRemoved', caller.userId, {
        statusId: status.id,
        role,
        left: true,
      })
      return status
    },
    accessChanged,
  )
}

export interface PageRequest {
  limit?: number
  cursor?: string
}

const positionOf = (cursor: string | undefined) =>
  cursor === undefined ? undefined : decodePosition(cursor)

/** GET /v1/user/subscriptions — statuses the caller has a role on but does not own. */
export async function listSubscriptions(
  deps: ServiceDeps,
  caller: Caller,
  page: PageRequest,
): Promise<Page<Subscription>> {
  const rows = await listSubscribedStatuses(deps.db, caller.userId, {
    // a key confined to some statuses lists only those (docs/accounts.md#scoped-keys)
    ...(caller.limits?.statusIds != null && { among: caller.limits.statusIds }),
    after: positionOf(page.cursor),
    limit: page.limit === undefined ? undefined : page.limit + 1,
  })
  return toPage(rows, page.limit, (r) => [r.role_created_at, r.id], toSubscription)
}

// The owner comes first in a user list; its cursor sorts before every granted role's.
const OWNER_POSITION = ['', '']

/**
 * GET …/users — everyone with a role on the status, the owner first, then grants in order;
 * visible per `accessTypeUserList` (403 when the caller sees the status but not the list).
 */
export async function listStatusUsers(
  deps: ServiceDeps,
  access: StatusAccess,
  page: PageRequest,
): Promise<Page<StatusUser>> {
  const status = assertMayReadDetail(
    access.status,
    access.role,
    (s) => s.access_type_user_list as AccessLevel,
    'user list',
  )
  const after = positionOf(page.cursor)
  const entries: { user: StatusUser; position: string[] }[] = []
  if (!after) {
    const owner = await userById(deps.db, status.owner_id)
    if (owner)
      entries.push({
        user: { userId: owner.id, name: owner.name, role: 'owner' },
        position: OWNER_POSITION,
      })
  }
  const granted = await listRoleHolders(deps.db, status.id, {
    // an owner-position cursor means "every granted role": it sorts before all of them
    after: after && (after.createdAt !== '' || after.id !== '') ? after : undefined,
    limit: page.limit === undefined ? undefined : page.limit + 1,
  })
  for (const r of granted)
    entries.push({
      user: { userId: r.user_id, name: r.name, role: r.role as GrantedRole },
      position: [r.created_at, r.user_id],
    })
  return toPage(
    entries,
    page.limit,
    (e) => e.position,
    (e) => e.user,
  )
}

/**
 * Of the status ids given, those the user owns or holds a role on: what a key of theirs may be
 * confined to (docs/accounts.md#scoped-keys).
 */
export async function reachableStatuses(
  db: Db,
  userId: string,
  statusIds: readonly string[],
): Promise<ReadonlySet<string>> {
  return new Set(await reachableStatusIds(db, userId, statusIds))
}

/**
 * Of the users given, those who may see the status now (its owner, a role holder, anyone when
 * it is public): whom a notification about it may reach (docs/notifications.md#rules). Empty
 * when the status is gone.
 */
export async function viewersAmong(
  db: Db,
  statusId: string,
  userIds: readonly string[],
): Promise<Set<string>> {
  const status = await findStatusById(db, statusId)
  if (!status) return new Set()
  if (status.access_type === 'public') return new Set(userIds)
  const holders = new Set(await roleHolderIds(db, statusId))
  return new Set(userIds.filter((id) => id === status.owner_id || holders.has(id)))
}
