import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Kysely, Transaction } from 'kysely'
import type { DB, User } from '../../db/database.ts'
import { type Writer, writerOf } from '../../db/writer.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { recordSecurityEvent } from '../audit/security-events.ts'
import { forgetResponsesOf } from '../idempotency/idempotency.service.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { announceDeletedStatuses, deleteOwnedStatusesIn } from '../statuses/statuses.service.ts'
import {
  assertOtherOperator,
  deleteUserIn,
  lockOperators,
  userById,
} from '../users/users.service.ts'

// Deleting an account (docs/accounts.md#delete-your-account), by its owner (DELETE /v1/user)
// or by an operator (DELETE /v1/admin/users/:userId): the same rules either way.

/** What deleting an account acts on. */
export interface AccountDeletionDeps {
  db: Kysely<DB>
  writer?: Writer
  clock?: Clock
  /** The statuses' services: the account's statuses are announced gone through them. */
  statuses: ServiceDeps
  /**
   * After the account is gone: this instance forgets its cached keys and checks its open
   * streams, and every instance is told to (the credentials bus).
   */
  userChanged(userId: string): void
}

/** Who deletes the account, as its security event records it. */
export interface Deleter {
  /** `accountDeleted` (the owner) or `admin.userDeleted` (an operator). */
  kind: 'accountDeleted' | 'admin.userDeleted'
  actorId: string
  ip?: string | null | undefined
  userAgent?: string | null | undefined
}

/**
 * The most statuses one transaction deletes before the account's own: an account with many
 * statuses goes in several short transactions, so other writers never wait long.
 */
export const STATUS_BATCH = 100

/** The most of the account's other rows (stored responses) one transaction deletes. */
export const ROW_BATCH = 1000

const userNotFound = () => notFound('User not found')

/**
 * Checks, in the transaction that holds the operators' lock, that the account may go: it
 * exists (404), and it is not the last enabled operator (409). Its row.
 */
async function deletableUser(tx: Transaction<DB>, userId: string): Promise<User> {
  await lockOperators(tx)
  const user = await userById(tx, userId)
  if (!user) throw userNotFound()
  await assertOtherOperator(tx, user)
  return user
}

/**
 * Deletes the account and everything it owns: its statuses (STATUS_BATCH to a transaction,
 * each batch announced to the streams on them once it committed; their history goes after,
 * in batches, through the history sweep), its stored responses (ROW_BATCH to a
 * transaction), then in one transaction the account's row with its
 * keys, sessions, passkeys, roles, boards, channels and rules (the schema's cascades) and
 * the security event, which the log keeps. The address is free once this returns; streams
 * opened with the account's keys or sessions end on every instance. 404 for no such account,
 * 409 for the last enabled operator (checked before anything goes, and again with the row).
 * Returns the account as it was, for the goodbye mail.
 */
export async function deleteAccount(
  deps: AccountDeletionDeps,
  userId: string,
  by: Deleter,
): Promise<{ user: User; statuses: number }> {
  const writer = writerOf(deps)
  await writer.run((tx) => deletableUser(tx, userId))
  let statuses = 0
  for (;;) {
    const changes = await writer.run((tx) =>
      deleteOwnedStatusesIn(tx, deps.statuses, userId, STATUS_BATCH),
    )
    statuses += changes.length
    await announceDeletedStatuses(deps.statuses, changes)
    if (changes.length < STATUS_BATCH) break
    await nextTurn()
  }
  // its stored responses (Idempotency-Key), which a busy account has many of, in batches too
  while ((await writer.run((tx) => forgetResponsesOf(tx, userId, ROW_BATCH))) === ROW_BATCH)
    await nextTurn()
  const { user, changes } = await writer.run(async (tx) => {
    const user = await deletableUser(tx, userId)
    // statuses made while the batches ran go with the account
    const changes = await deleteOwnedStatusesIn(tx, deps.statuses, userId)
    await deleteUserIn(tx, userId)
    await recordSecurityEvent(
      tx,
      {
        kind: by.kind,
        userId,
        actorId: by.actorId,
        ip: by.ip,
        userAgent: by.userAgent,
        // the account is gone: the log keeps who it was
        detail: { name: user.name, email: user.email, statuses: statuses + changes.length },
      },
      new Date((deps.clock ?? systemClock).now()).toISOString(),
    )
    return { user, changes }
  })
  await announceDeletedStatuses(deps.statuses, changes)
  deps.userChanged(userId)
  return { user, statuses: statuses + changes.length }
}
