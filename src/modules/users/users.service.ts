import type { Kysely, Transaction } from 'kysely'
import type { DB, Db, User } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { conflict, forbidden, UserInputError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { singleLineTextProblem } from '../../lib/text.ts'
import { creationIso, nowIso } from '../../lib/time.ts'
import { recordSecurityEvent } from '../audit/security-events.ts'
import type { Plans } from '../plans/plans.ts'
import { emailKeyOf, emailProblem } from './email-address.ts'
import {
  countActiveOperators,
  countAdmins,
  deleteUserRow,
  findUserByEmail,
  findUserById,
  insertUser,
  listUsers,
  updateUser,
} from './users.repository.ts'

export type AuthLevel = 'verified' | 'authenticated'

/** A user as the CLI and the API show it. */
export interface UserView {
  id: string
  name: string
  email: string | null
  plan: string
  authLevel: AuthLevel
  /** An operator: may administer the instance (docs/operations.md#operators). */
  admin: boolean
  createdAt: string
}

export const authLevelOf = (user: Pick<User, 'verified'>): AuthLevel =>
  Number(user.verified) === 1 ? 'verified' : 'authenticated'

/**
 * The answer to signing in to an account an operator disabled (docs/operations.md#operators),
 * by any method: 403, given only to whoever proved the credentials (a wrong password stays
 * 401 `invalidCredentials`).
 */
export const accountDisabled = () =>
  forbidden('This account is disabled: ask an operator of this service')

/** Throws `accountDisabled` when an operator disabled the user (null: no such user, no throw). */
export function assertEnabled(user: Pick<User, 'disabled_at'> | undefined): void {
  if (user !== undefined && user.disabled_at !== null) throw accountDisabled()
}

export const toUserView = (user: User): UserView => ({
  id: user.id,
  name: user.name,
  email: user.email,
  plan: user.plan,
  authLevel: authLevelOf(user),
  admin: Number(user.admin) === 1,
  createdAt: user.created_at,
})

function assertPlan(plans: Plans, plan: string): void {
  if (!Object.hasOwn(plans, plan))
    throw new UserInputError(`unknown plan "${plan}" (plans: ${Object.keys(plans).join(', ')})`)
}

/** A user's name: 1 to 60 code points of single-line text (docs/api.md#validation-rules). */
export const USER_NAME_LENGTHS = { minLength: 1, maxLength: 60 } as const

/** The name, trimmed, or a UserInputError saying what is wrong with it. */
function checkedName(name: string): string {
  const trimmed = name.trim()
  const problem = singleLineTextProblem(trimmed, USER_NAME_LENGTHS)
  if (problem) throw new UserInputError(`name ${problem}`)
  return trimmed
}

/** The address, trimmed, if it is one and no other user has it (compared case-insensitively). */
async function checkedEmail(db: Db, email: string, userId?: string): Promise<string> {
  const trimmed = email.trim()
  const problem = emailProblem(trimmed)
  if (problem) throw new UserInputError(`e-mail "${email}" ${problem}`)
  const holder = await findUserByEmail(db, trimmed)
  if (holder && holder.id !== userId)
    throw new UserInputError(`a user with e-mail ${holder.email ?? trimmed} exists`)
  return trimmed
}

export async function createUser(
  db: Kysely<DB>,
  plans: Plans,
  input: { name: string; email?: string; plan: string; verified: boolean; admin?: boolean },
): Promise<UserView> {
  const name = checkedName(input.name)
  assertPlan(plans, input.plan)
  const email = input.email === undefined ? undefined : await checkedEmail(db, input.email)
  const user = await insertUser(db, {
    id: newId(),
    name,
    email: email ?? null,
    email_key: email === undefined ? null : emailKeyOf(email),
    plan: input.plan,
    verified: input.verified ? 1 : 0,
    created_at: creationIso(),
    password_hash: null,
    // the operator vouches for the address of a user they make verified (docs/operations.md#users)
    email_verified_at: email !== undefined && input.verified ? nowIso() : null,
    admin: input.admin ? 1 : 0,
  })
  return toUserView(user)
}

export async function allUsers(db: Kysely<DB>): Promise<UserView[]> {
  return (await listUsers(db)).map(toUserView)
}

/** The user with this id, if any; other modules read users through this, in their transaction. */
export const userById = (db: Db, id: string): Promise<User | undefined> => findUserById(db, id)

/** Finds a user by id or e-mail address. */
export async function resolveUser(db: Kysely<DB>, idOrEmail: string): Promise<User> {
  const user = idOrEmail.includes('@')
    ? await findUserByEmail(db, idOrEmail)
    : await findUserById(db, idOrEmail)
  if (!user) throw new UserInputError(`no user ${idOrEmail}`)
  return user
}

export async function setUser(
  db: Kysely<DB>,
  plans: Plans,
  idOrEmail: string,
  changes: { plan?: string; verified?: boolean; name?: string; email?: string; admin?: boolean },
): Promise<UserView> {
  const user = await resolveUser(db, idOrEmail)
  if (changes.plan !== undefined) assertPlan(plans, changes.plan)
  const name = changes.name === undefined ? undefined : checkedName(changes.name)
  // note: the operator vouches for an address they set, as for --verified: no link is mailed,
  // and the address counts as confirmed (an e-mail-bound invitation to it may be accepted)
  const email =
    changes.email === undefined ? undefined : await checkedEmail(db, changes.email, user.id)
  const vouched =
    email !== undefined ||
    (changes.verified === true && user.email !== null && user.email_verified_at === null)
  const updated = await db.transaction().execute(async (tx) => {
    const row = await updateUser(tx, user.id, {
      ...(changes.plan !== undefined && { plan: changes.plan }),
      ...(changes.verified !== undefined && { verified: changes.verified ? 1 : 0 }),
      ...(name !== undefined && { name }),
      ...(email !== undefined && { email, email_key: emailKeyOf(email) }),
      ...(vouched && { email_verified_at: nowIso() }),
      ...(changes.admin !== undefined && { admin: changes.admin ? 1 : 0 }),
    })
    // the admin flag granted or taken is in the account's security log; the operator at the
    // server's shell acts as no user (docs/operations.md#operators)
    if (row && changes.admin !== undefined && changes.admin !== (Number(user.admin) === 1))
      await recordSecurityEvent(tx, {
        kind: changes.admin ? 'adminGranted' : 'adminRevoked',
        userId: user.id,
        actorId: null,
        detail: { by: 'cli' },
      })
    return row
  })
  if (!updated) throw new UserInputError(`no user ${idOrEmail}`)
  return toUserView(updated)
}

/** How many users are operators (the CLI says when none is left). */
export const countOperators = (db: Db): Promise<number> => countAdmins(db)

/**
 * Every change that could leave no operator (demoting, disabling, deleting one) takes this
 * lock first, so that two at once on any instance are judged one after the other.
 */
export const lockOperators = (tx: Transaction<DB>) => lockForTransaction(tx, 'statusd:operators')

/**
 * Refuses (409) a change that takes away the last working operator: an operator demoted,
 * disabled or deleted while no other enabled operator remains (docs/operations.md#operators).
 */
export async function assertOtherOperator(
  tx: Db,
  user: Pick<User, 'admin' | 'disabled_at'>,
): Promise<void> {
  if (Number(user.admin) !== 1 || user.disabled_at !== null) return
  if ((await countActiveOperators(tx)) <= 1)
    throw conflict(
      'This would leave the service without an operator: make another user an operator first',
    )
}

/** Deletes the user's row; what is theirs goes with it (the schema's cascades). */
export const deleteUserIn = (tx: Db, userId: string): Promise<boolean> => deleteUserRow(tx, userId)
