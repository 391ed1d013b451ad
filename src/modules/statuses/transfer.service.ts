import type { Transaction } from 'kysely'
import type { DB, StatusRow } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { writerOf } from '../../db/writer.ts'
import { notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { creationIso } from '../../lib/time.ts'
import { type Requester, recordBy } from '../audit/security-events.ts'
import { planOf } from '../plans/plan-of.ts'
import { assertUnderStatusLimit } from '../plans/plan-rules.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { userById } from '../users/users.service.ts'
import { replaceRoleInvitation, withdrawTransfers } from './invitations.repository.ts'
import type { RoleInvitation } from './invitations.schemas.ts'
import { deleteRole, upsertRole } from './sharing.repository.ts'
import { ownedStatus, ownerConflict } from './sharing.service.ts'
import { countOwnedStatuses, findStatusByKey, setStatusOwner } from './statuses.repository.ts'
import type { Caller } from './statuses.service.ts'
import type { TransferredStatus } from './transfer.schemas.ts'

/**
 * POST /v1/status/:statusId/transfer — the owner offers the status to another user
 * (docs/sharing.md#transfer): a pending invitation for the role `owner`, which the user accepts
 * or declines like any other. One transfer is pending per status: a new offer withdraws an
 * earlier one, and replaces any other invitation of that user to the status.
 */
export async function offerTransfer(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  userId: string,
  by?: Requester,
): Promise<RoleInvitation> {
  return writerOf(deps).run(async (tx) => {
    const status = await ownedStatus(tx, caller, statusId)
    const user = await userById(tx, userId)
    if (!user) throw notFound('User not found')
    if (user.id === status.owner_id) throw ownerConflict('You own this status already')
    const inviter = await userById(tx, caller.userId)
    await withdrawTransfers(tx, status.id)
    const row = {
      id: newId(),
      status_id: status.id,
      user_id: user.id,
      role: 'owner',
      invited_by: caller.userId,
      created_at: creationIso(),
    }
    await replaceRoleInvitation(tx, row)
    // both see the offer in their security log: the owner made it, the user may take it
    const detail = { statusId: status.id, from: status.owner_id, to: user.id, pending: true }
    await recordBy(tx, by, 'statusTransferOffered', status.owner_id, detail)
    await recordBy(tx, by, 'statusTransferOffered', user.id, detail)
    return {
      id: row.id,
      statusId: status.id,
      statusName: status.name,
      userId: user.id,
      role: 'owner',
      invitedBy: { userId: caller.userId, name: inviter?.name ?? '' },
      createdAt: row.created_at,
    }
  })
}

/**
 * DELETE /v1/status/:statusId/transfer — the owner withdraws the pending transfer: everything
 * stays as it was, a role the user held included. 404 when none is pending.
 */
export async function withdrawTransfer(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
): Promise<void> {
  await writerOf(deps).run(async (tx) => {
    const status = await ownedStatus(tx, caller, statusId)
    if (!(await withdrawTransfers(tx, status.id)))
      throw notFound('No transfer of this status is pending')
  })
}

/**
 * Accepting a transfer, inside the acceptance's transaction (the invitation taken, the status
 * locked): the caller owns the status, the previous owner becomes an updater, and the
 * caller's own role on it (now implied) goes. The status keeps its key unless the caller owns
 * a status by that key already: then its key becomes null and `keyKept` says so. The new
 * owner's plan must leave room for one more status (402 otherwise). `version`: the status's
 * new one, which its streams announce to everyone who sees it.
 */
export async function takeOwnership(
  tx: Transaction<DB>,
  deps: ServiceDeps,
  caller: Caller,
  status: StatusRow,
  by?: Requester,
): Promise<{ answer: TransferredStatus; version: number }> {
  // the new owner's creates and this take turns (statuses.service.ts), so the plan's limit
  // and the key's uniqueness are judged on what they left
  await lockForTransaction(tx, `statusd:create:${caller.userId}`)
  assertUnderStatusLimit(
    planOf(deps.plans, caller.plan),
    await countOwnedStatuses(tx, caller.userId),
  )
  const previous = status.owner_id
  const key = status.status_key
  const keyKept = key === null || (await findStatusByKey(tx, caller.userId, key)) === undefined
  const now = creationIso()
  const version = await setStatusOwner(tx, status.id, caller.userId, keyKept ? key : null, now)
  await deleteRole(tx, status.id, caller.userId)
  await upsertRole(tx, {
    status_id: status.id,
    user_id: previous,
    role: 'updater',
    created_at: now,
  })
  await withdrawTransfers(tx, status.id)
  const detail = { statusId: status.id, from: previous, to: caller.userId, keyKept }
  await recordBy(tx, by, 'statusTransferred', previous, detail)
  await recordBy(tx, by, 'statusTransferred', caller.userId, detail)
  const answer: TransferredStatus = {
    statusId: status.id,
    statusKey: keyKept ? key : null,
    shareId: status.share_id,
    name: status.name,
    role: 'owner',
    keyKept,
  }
  return { answer, version }
}
