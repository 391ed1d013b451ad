import type { Db, StatusRow } from '../../db/database.ts'
import { cursorNotIssued, decodeCursor, type Page, toPage } from '../../lib/cursor.ts'
import { planOf } from '../plans/plan-of.ts'
import type { Plan, Plans } from '../plans/plans.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { userById } from '../users/users.service.ts'
import { type HistoryRow, listHistory } from './history.repository.ts'
import type { HistoryEntry } from './history.schemas.ts'
import { assertMayReadDetail, mayReadDetail, type Role } from './statuses.access.ts'
import type { AccessLevel } from './statuses.schemas.ts'

const DAY_MS = 24 * 60 * 60 * 1000

/** The oldest moment a plan keeps history for (RFC 3339), or null when it keeps it forever. */
export function retentionCutoff(plan: Plan, now: Date = new Date()): string | null {
  if (plan.historyDays === null) return null
  return new Date(now.getTime() - plan.historyDays * DAY_MS).toISOString()
}

/** The plan of the status's owner: retention and description links follow the owner. */
export async function ownerPlanOf(db: Db, plans: Plans, status: StatusRow): Promise<Plan> {
  const owner = await userById(db, status.owner_id)
  return planOf(plans, owner?.plan ?? '')
}

/** Who asks: their role on the status (null: none, or anonymous), and who they are. */
export interface HistoryAccess {
  status: StatusRow
  role: Role | null
  /** The user asking (absent: anonymous): the entries they wrote name the key they used. */
  viewerId?: string
}

function beforeOf(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined
  const [changeNo] = decodeCursor(cursor, [/^[1-9]\d{0,15}$/]) as [string]
  const n = Number(changeNo)
  if (!Number.isSafeInteger(n)) throw cursorNotIssued()
  return n
}

/**
 * GET …/history — value updates, newest first, within the owner's retention; visible per
 * `accessTypeHistory` (403 when the caller sees the status but not its history). `by` is
 * null for a caller who may not see the user list: history must not reveal who has a role.
 * `via` names the API key of the entries the caller wrote, null on every other entry.
 */
export async function listStatusHistory(
  deps: ServiceDeps,
  access: HistoryAccess,
  page: { limit?: number; cursor?: string },
): Promise<Page<HistoryEntry>> {
  const status = assertMayReadDetail(
    access.status,
    access.role,
    (s) => s.access_type_history as AccessLevel,
    'history',
  )
  const showBy = mayReadDetail(status.access_type_user_list as AccessLevel, status, access.role)
  const plan = await ownerPlanOf(deps.db, deps.plans, status)
  const rows = await listHistory(deps.db, status.id, {
    cutoff: retentionCutoff(plan),
    keepChangeNo: Number(status.change_count),
    before: beforeOf(page.cursor),
    limit: page.limit === undefined ? undefined : page.limit + 1,
  })
  return toPage(
    rows,
    page.limit,
    (r) => [String(r.change_no)],
    (r: HistoryRow): HistoryEntry => ({
      value: r.value,
      at: r.at,
      // a value the timed worker wrote (an end, a schedule's fire) shows no author
      by:
        showBy && r.via === null
          ? { userId: r.by_user_id, name: r.by_name ?? '(deleted user)' }
          : null,
      // note: only to the writer: another user's keys (their ids and labels) are theirs alone
      via:
        r.via === 'schedule'
          ? 'schedule'
          : r.by_key_id !== null &&
              access.viewerId !== undefined &&
              r.by_user_id === access.viewerId
            ? { type: 'key', keyId: r.by_key_id, label: r.by_key_label }
            : null,
    }),
  )
}
