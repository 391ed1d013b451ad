import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import type { TestApp, TestUser } from '../helpers/app.ts'

/** An operator with a key holding every scope, `admin` too. */
export async function makeOperator(
  t: TestApp,
  { name = 'Operator', email }: { name?: string; email?: string } = {},
): Promise<TestUser> {
  const user = await createUser(t.database.db, t.app.plans, {
    name,
    plan: 'unlimited',
    verified: true,
    admin: true,
    ...(email !== undefined && { email }),
  })
  const { key } = await createApiKey(t.database.db, user.id)
  return { id: user.id, key }
}

/** A user who is not an operator, with an e-mail address, and a key. */
export async function makePerson(
  t: TestApp,
  { name, email, plan = 'free' }: { name: string; email: string; plan?: string },
): Promise<TestUser> {
  const user = await createUser(t.database.db, t.app.plans, { name, email, plan, verified: true })
  const { key } = await createApiKey(t.database.db, user.id)
  return { id: user.id, key }
}
