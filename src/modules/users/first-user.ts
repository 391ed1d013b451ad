import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import { recordSecurityEvent } from '../audit/security-events.ts'
import { createApiKey } from '../keys/keys.service.ts'
import { mostCapablePlan, type Plans } from '../plans/plans.ts'
import { countUsers } from './users.repository.ts'
import { createUser, type UserView } from './users.service.ts'

/**
 * On an empty database, creates the first operator (docs/operations.md#operators): a verified
 * admin on the most capable plan, and a key for it,
 * so that `curl` works right away. Returns them (the key shown once), or null when users exist.
 */
export async function ensureFirstUser(
  db: Kysely<DB>,
  plans: Plans,
): Promise<{ user: UserView; key: string } | null> {
  return db.transaction().execute(async (tx) => {
    // several instances may start at once on an empty database: exactly one creates the user
    await lockForTransaction(tx, 'statusd:first-user')
    if ((await countUsers(tx)) > 0) return null
    const user = await createUser(tx, plans, {
      name: 'admin',
      plan: mostCapablePlan(plans),
      verified: true,
      admin: true,
    })
    await recordSecurityEvent(tx, {
      kind: 'adminGranted',
      userId: user.id,
      actorId: null,
      detail: { by: 'first start' },
    })
    const key = await createApiKey(tx, user.id, { label: 'first start' })
    return { user, key: key.key }
  })
}
