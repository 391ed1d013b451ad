import type { Db, StatusRow } from '../../db/database.ts'
import { forbidden, notFound } from '../../lib/errors.ts'
import { findRole } from './sharing.repository.ts'
import type { AccessLevel, StatusInput } from './statuses.schemas.ts'

/**
 * What a user may be to a status: its owner, or a granted updater or subscriber
 * (docs/sharing.md#roles).
 */
export type Role = 'owner' | 'updater' | 'subscriber'

/** The caller's role on a status, or null when they have none (or are anonymous). */
export async function roleOn(
  db: Db,
  status: StatusRow,
  userId: string | null,
): Promise<Role | null> {
  if (userId === null) return null
  if (status.owner_id === userId) return 'owner'
  const granted = await findRole(db, status.id, userId)
  return granted ? (granted.role as Role) : null
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

/**
 * Who may read a status's history or user list at an access level (docs/sharing.md#roles):
 * `public` = whoever can see the status, `private` = users with a role on it, `owner` = the owner
 * only.
 */
export function mayReadDetail(level: AccessLevel, status: StatusRow, role: Role | null): boolean {
  if (level === 'owner') return role === 'owner'
  if (level === 'private') return role !== null
  return canView(status, role)
}

/**
 * Throws unless the caller may read the detail (history, user list) at this level: 404 when
 * they cannot see the status at all, 403 forbidden when they can but the level shuts them out.
 */
export function assertMayReadDetail(
  status: StatusRow | undefined,
  role: Role | null,
  level: (status: StatusRow) => AccessLevel,
  what: string,
): StatusRow {
  const visible = assertVisible(status, role)
  if (!mayReadDetail(level(visible), visible, role))
    throw forbidden(`You may not see the ${what} of this status`)
  return visible
}
