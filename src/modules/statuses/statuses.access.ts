import type { Db, StatusRow } from '../../db/database.ts'
import { forbidden, notFound } from '../../lib/errors.ts'
import type { CredentialLimits } from '../keys/scopes.ts'
import { findRole } from './sharing.repository.ts'
import type { AccessLevel, StatusInput } from './statuses.schemas.ts'
import { VALUE_FIELDS } from './value-end.ts'

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

/** True when a credential with these limits reaches the status: a device key only its own. */
export const withinReach = (status: StatusRow, limits: CredentialLimits | undefined): boolean =>
  limits?.statusIds == null || limits.statusIds.includes(status.id)

/**
 * Throws unless the caller may see the status: the one check every status resolved for a
 * caller passes. A private status the caller has no role on answers 404, never 403, so that
 * its existence does not leak; so does any status outside the statuses the caller's API key
 * is confined to (docs/accounts.md#scoped-keys). `limits`: the caller's key's, undefined for a
 * session or an anonymous reader.
 */
export function assertVisible(
  status: StatusRow | undefined,
  role: Role | null,
  limits: CredentialLimits | undefined,
): StatusRow {
  if (!status || !canView(status, role) || !withinReach(status, limits))
    throw notFound('Status not found')
  return status
}

/**
 * The caller's own status with this status key, for a route by key: 404 unless it exists and
 * is within reach of the caller's key. A key confined to statuses is told why, in words that
 * fit whether no status has the key or one beyond its reach has it (which must not leak): it
 * reaches only its statuses, and creates none (docs/accounts.md#scoped-keys).
 */
export function assertOwnKeyReached(
  status: StatusRow | undefined,
  key: string,
  limits: CredentialLimits | undefined,
): StatusRow {
  if (limits?.statusIds != null && !(status && withinReach(status, limits)))
    throw notFound(
      `None of the statuses this API key is confined to has the key ${key}: a key confined to statuses reaches only those, and cannot create one`,
    )
  return assertVisible(status, 'owner', limits)
}

/** Throws 403 unless the role may change every property in the input (an updater: the value and its end). */
export function assertMayChange(role: Role | null, input: StatusInput | 'delete'): void {
  if (role === 'owner') return
  if (
    role === 'updater' &&
    input !== 'delete' &&
    Object.keys(input).every((k) => VALUE_FIELDS.has(k))
  )
    return
  throw forbidden(
    role === 'updater'
      ? 'Updaters may change only the value (and its end)'
      : 'You may not change this status',
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
 * Throws 403 forbidden unless the caller, who sees the status (`assertVisible`), may read the
 * detail (history, user list) at this level.
 */
export function assertMayReadDetail(
  visible: StatusRow,
  role: Role | null,
  level: (status: StatusRow) => AccessLevel,
  what: string,
): StatusRow {
  if (!mayReadDetail(level(visible), visible, role))
    throw forbidden(`You may not see the ${what} of this status`)
  return visible
}
