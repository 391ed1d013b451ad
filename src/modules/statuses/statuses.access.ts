import type { Db, StatusRow } from '../../db/database.ts'
import { forbidden, notFound } from '../../lib/errors.ts'
import type { StatusInput } from './statuses.schemas.ts'

/** What a user may be to a status. Owner today; updater and subscriber come with sharing. */
export type Role = 'owner' | 'updater' | 'subscriber'

/** The caller's role on a status, or null when they have none. */
export async function roleOn(_db: Db, status: StatusRow, userId: string): Promise<Role | null> {
  if (status.owner_id === userId) return 'owner'
  // note: granted roles (updater, subscriber) are looked up here once sharing exists
  return null
}

/** True when someone with this role (or none) may read the status. */
export const canView = (status: StatusRow, role: Role | null): boolean =>
  role !== null || status.access_type === 'public'

/**
 * Throws unless the caller may see the status. A private status the caller has no role on
 * answers 404, never 403, so that its existence does not leak.
 */
export function assertVisible(status: StatusRow | undefined, role: Role | null): StatusRow {
  if (!status || !canView(status, role)) throw notFound('Status not found')
  return status
}

/** Throws 403 unless the role may change every property in the input. */
export function assertMayChange(role: Role | null, input: StatusInput | 'delete'): void {
  if (role === 'owner') return
  if (role === 'updater' && input !== 'delete' && Object.keys(input).every((k) => k === 'value'))
    return
  throw forbidden(
    role === 'updater' ? 'Updaters may change only the value' : 'You may not change this status',
  )
}
