import type { Transaction } from 'kysely'
import type { DB, Db, User } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { ApiError } from '../../lib/errors.ts'
import { emailKeyOf } from './email-address.ts'
import { findUserByEmail, findUserById, updateUser } from './users.repository.ts'
import { toUserView, type UserView } from './users.service.ts'

// The user's e-mail address and password as the e-mail flows change them
// (docs/accounts.md#e-mail): a confirmed address, a password set through a reset link.

/** The user with this address (compared case-insensitively), if any. */
export const userByEmail = (db: Db, email: string): Promise<User | undefined> =>
  findUserByEmail(db, email)

export const emailTaken = () =>
  new ApiError(409, 'conflict', 'Another account uses this e-mail address')

/**
 * Records that the user proved they read mail at `email` (they followed the link mailed
 * there): the address becomes theirs if it was a change, and they become `verified`
 * (docs/accounts.md#e-mail). Uniqueness is checked again: another account may have taken the
 * address since the link was sent (409); the address's lock makes that check hold until
 * the transaction ends.
 */
export async function confirmEmailAddress(
  db: Transaction<DB>,
  userId: string,
  email: string,
  now: string,
): Promise<UserView> {
  await lockForTransaction(db, `statusd:email:${emailKeyOf(email)}`)
  const holder = await findUserByEmail(db, email)
  if (holder && holder.id !== userId) throw emailTaken()
  const updated = await updateUser(db, userId, {
    email,
    email_key: emailKeyOf(email),
    email_verified_at: now,
    verified: 1,
  })
  if (!updated) throw new ApiError(410, 'gone', 'This account no longer exists')
  return toUserView(updated)
}

/**
 * Replaces the user's password hash through a reset link, which also proves the address it
 * was mailed to (`now`: the time it did so): an address not verified before is now, and the
 * user `verified` with it (an operator's later `--unverified` is not undone by a reset).
 * False when the user is gone.
 */
export async function replacePasswordHash(
  db: Db,
  userId: string,
  hash: string,
  now: string,
): Promise<boolean> {
  const user = await findUserById(db, userId)
  if (!user) return false
  const updated = await updateUser(db, userId, {
    password_hash: hash,
    ...(user.email_verified_at === null && { email_verified_at: now, verified: 1 }),
  })
  return updated !== undefined
}
