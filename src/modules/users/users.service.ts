import type { Kysely } from 'kysely'
import type { DB, Db, User } from '../../db/database.ts'
import { UserInputError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { creationIso } from '../../lib/time.ts'
import type { Plans } from '../plans/plans.ts'
import {
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
  createdAt: string
}

export const authLevelOf = (user: Pick<User, 'verified'>): AuthLevel =>
  Number(user.verified) === 1 ? 'verified' : 'authenticated'

export const toUserView = (user: User): UserView => ({
  id: user.id,
  name: user.name,
  email: user.email,
  plan: user.plan,
  authLevel: authLevelOf(user),
  createdAt: user.created_at,
})

function assertPlan(plans: Plans, plan: string): void {
  if (!Object.hasOwn(plans, plan))
    throw new UserInputError(`unknown plan "${plan}" (plans: ${Object.keys(plans).join(', ')})`)
}

export async function createUser(
  db: Kysely<DB>,
  plans: Plans,
  input: { name: string; email?: string; plan: string; verified: boolean },
): Promise<UserView> {
  const name = input.name.trim()
  if (name.length === 0 || name.length > 100)
    throw new UserInputError('name must be 1 to 100 characters')
  assertPlan(plans, input.plan)
  if (input.email !== undefined && (await findUserByEmail(db, input.email)))
    throw new UserInputError(`a user with e-mail ${input.email} exists`)
  const user = await insertUser(db, {
    id: newId(),
    name,
    email: input.email ?? null,
    email_key: input.email?.toLowerCase() ?? null,
    plan: input.plan,
    verified: input.verified ? 1 : 0,
    created_at: creationIso(),
    password_hash: null,
    email_verified_at: null,
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
  changes: { plan?: string; verified?: boolean },
): Promise<UserView> {
  const user = await resolveUser(db, idOrEmail)
  if (changes.plan !== undefined) assertPlan(plans, changes.plan)
  const updated = await updateUser(db, user.id, {
    ...(changes.plan !== undefined && { plan: changes.plan }),
    ...(changes.verified !== undefined && { verified: changes.verified ? 1 : 0 }),
  })
  if (!updated) throw new UserInputError(`no user ${idOrEmail}`)
  return toUserView(updated)
}
