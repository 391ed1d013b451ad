import type { Db, StatusRow } from '../../db/database.ts'
import { systemClock } from '../../lib/clock.ts'
import type { Page } from '../../lib/cursor.ts'
import { notFound } from '../../lib/errors.ts'
import type { ServiceDeps } from '../service-deps.ts'
import type { HistoryEntry } from './history.schemas.ts'
import { listStatusHistory, ownerPlanOf } from './history.service.ts'
import { type ShareView, toShareView } from './share-view.ts'
import type { StatusUser } from './sharing.schemas.ts'
import { listStatusUsers, type PageRequest } from './sharing.service.ts'
import { staleFieldsOf } from './staleness.ts'
import { mayReadDetail } from './statuses.access.ts'
import { findStatusByShareId } from './statuses.repository.ts'
import type { AccessLevel } from './statuses.schemas.ts'

// What anyone on the internet sees of a status by its share id (docs/api.md#sharing-history-and-live-updates):
// the JSON share routes, the share page and badge, and the public event stream all ask here.

/** The public status with this share id; private and unknown are the same 404. */
export async function publicStatus(db: Db, shareId: string): Promise<StatusRow> {
  const status = await findStatusByShareId(db, shareId)
  // 404 for private too: a share id must not reveal that a private status exists
  if (status?.access_type !== 'public') throw notFound('Status not found')
  return status
}

/** The share view of a status: description links follow its owner's plan. */
export async function shareViewOf(deps: ServiceDeps, status: StatusRow): Promise<ShareView> {
  const plan = await ownerPlanOf(deps.db, deps.plans, status)
  return toShareView(status, plan, (deps.clock ?? systemClock).now())
}

/** A share view, with the stored version of the status it shows (for its ETag). */
export interface VersionedShareView {
  view: ShareView
  version: number
  /** The status's id: what its changes are announced by (render caches). */
  statusId: string
}

/** GET /v1/share/:shareId — the public view of a public status. */
export async function publicView(deps: ServiceDeps, shareId: string): Promise<VersionedShareView> {
  const status = await publicStatus(deps.db, shareId)
  return {
    view: await shareViewOf(deps, status),
    version: Number(status.version),
    statusId: status.id,
  }
}

/** GET /v1/share/:shareId/history — when the status's history is public (403 otherwise). */
export async function publicHistory(
  deps: ServiceDeps,
  shareId: string,
  page: PageRequest,
): Promise<Page<HistoryEntry>> {
  const status = await publicStatus(deps.db, shareId)
  return listStatusHistory(deps, { status, role: null }, page)
}

/** GET /v1/share/:shareId/users — when the status's user list is public (403 otherwise). */
export async function publicUsers(
  deps: ServiceDeps,
  shareId: string,
  page: PageRequest,
): Promise<Page<StatusUser>> {
  const status = await publicStatus(deps.db, shareId)
  return listStatusUsers(deps, { status, role: null }, page)
}

/** What the share page shows: the view, and the first entries of the public lists. */
export interface SharePage {
  view: ShareView
  /** Newest first; null when the history is not public. */
  history: HistoryEntry[] | null
  /** Null when the user list is not public. */
  users: StatusUser[] | null
  /** The stored version of the status (for the page's ETag). */
  version: number
  /** The status's id: what its changes are announced by (render caches). */
  statusId: string
}

/**
 * The share page's content, by the same rules as the JSON share routes: a list the API would
 * refuse an anonymous caller (403) is left out (null) rather than refused.
 */
export async function sharePage(
  deps: ServiceDeps,
  shareId: string,
  limits: { history: number; users: number },
): Promise<SharePage> {
  const status = await publicStatus(deps.db, shareId)
  const anyone = (level: string) => mayReadDetail(level as AccessLevel, status, null)
  const access = { status, role: null }
  return {
    view: await shareViewOf(deps, status),
    history: anyone(status.access_type_history)
      ? (await listStatusHistory(deps, access, { limit: limits.history })).items
      : null,
    users: anyone(status.access_type_user_list)
      ? (await listStatusUsers(deps, access, { limit: limits.users })).items
      : null,
    version: Number(status.version),
    statusId: status.id,
  }
}

/** What a badge shows of a public status. */
export interface ShareBadge {
  name: string
  value: string | null
  colorNo: number
  /** Stale (docs/notifications.md#staleness): the badge is grey and says so. */
  stale: boolean
  /** The stored version of the status (for the badge's ETag). */
  version: number
  /** The status's id: what its changes are announced by (render caches). */
  statusId: string
}

/** The badge of a status, at `nowMs` (staleness). */
export const badgeOf = (status: StatusRow, nowMs: number): ShareBadge => ({
  name: status.name,
  value: status.value,
  colorNo: status.color_no,
  stale: staleFieldsOf(status, nowMs).stale,
  version: Number(status.version),
  statusId: status.id,
})

/** The badge of a public status (404 as the share view). */
export async function shareBadge(deps: ServiceDeps, shareId: string): Promise<ShareBadge> {
  return badgeOf(await publicStatus(deps.db, shareId), (deps.clock ?? systemClock).now())
}
