import type { Db, NewUser, User, UserUpdate } from '../../db/database.ts'
import { emailKeyOf } from './email-address.ts'

export const insertUser = (db: Db, user: NewUser): Promise<User> =>
  db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow()

export const findUserById = (db: Db, id: string): Promise<User | undefined> =>
  db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()

/** The user with this e-mail address, compared case-insensitively (its folded `email_key`). */
export const findUserByEmail = (db: Db, email: string): Promise<User | undefined> =>
  db.selectFrom('users').selectAll().where('email_key', '=', emailKeyOf(email)).executeTakeFirst()

export const listUsers = (db: Db): Promise<User[]> =>
  db.selectFrom('users').selectAll().orderBy('created_at').orderBy('id').execute()

export const updateUser = (db: Db, id: string, changes: UserUpdate): Promise<User | undefined> =>
  db.updateTable('users').set(changes).where('id', '=', id).returningAll().executeTakeFirst()

export async function countUsers(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function countAdmins(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('admin', '=', 1)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** How many operators there are that are not disabled. */
export async function countActiveOperators(db: Db): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('admin', '=', 1)
    .where('disabled_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Deletes a user; what is theirs goes with them (the schema's cascades). */
export async function deleteUserRow(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}
