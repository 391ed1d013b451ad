import { lockForTransaction } from '../../db/locks.ts'
import { writerOf } from '../../db/writer.ts'
import {
  ApiError,
  type FieldError,
  notFound,
  planLimitReached,
  validationError,
} from '../../lib/errors.ts'
import { newId, newShareId } from '../../lib/ids.ts'
import { nowIso } from '../../lib/time.ts'
import { planOf } from '../plans/plan-of.ts'
import { maxBoardsOf } from '../plans/plans.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { shareViewOf } from '../statuses/share.service.ts'
import { accessById } from '../statuses/sharing.service.ts'
import type { AccessType } from '../statuses/statuses.schemas.ts'
import { type Caller, findStatus } from '../statuses/statuses.service.ts'
import {
  type BoardRow,
  countBoardsOf,
  deleteBoardRow,
  findBoardById,
  findBoardByShareId,
  insertBoard,
  listBoardsOf,
  updateBoardRow,
} from './boards.repository.ts'
import type { Board, BoardCreate, BoardUpdate, PublicBoard } from './boards.schemas.ts'

// Boards (docs/app.md#boards-and-the-wall): a named, ordered set of statuses shown together,
// on the wall page `/b/<shareId>` when public. A board shows statuses; it grants nothing:
// each viewer sees of each status what they may see anyway.

export const boardStatusIds = (row: BoardRow): string[] => JSON.parse(row.status_ids) as string[]

/** The API's view of a board; `url` is the wall page. */
export const toBoard = (row: BoardRow, publicUrl: string | null): Board => ({
  id: row.id,
  shareId: row.share_id,
  name: row.name,
  statusIds: boardStatusIds(row),
  accessType: row.access_type as AccessType,
  url: `${publicUrl ?? ''}/b/${row.share_id}`,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
})

/**
 * Throws 400 validationError naming every status id the caller may not see (unknown,
 * private without a role, outside a confined key's statuses): a board holds only statuses
 * its owner sees, whatever they become later.
 */
async function assertVisibleStatuses(
  deps: ServiceDeps,
  caller: Caller,
  ids: string[],
): Promise<void> {
  const errors: FieldError[] = []
  for (const [i, id] of ids.entries()) {
    try {
      await accessById(deps.db, caller, id)
    } catch (err) {
      if (!(err instanceof ApiError) || err.statusCode !== 404) throw err
      errors.push({ field: `statusIds.${i}`, message: 'is not a status you may see' })
    }
  }
  if (errors.length > 0) throw validationError(errors, 'Request body is invalid')
}

/** POST /v1/boards — a new board, within the plan's `maxBoards`. */
export async function createBoard(
  deps: ServiceDeps,
  caller: Caller,
  input: BoardCreate,
): Promise<BoardRow> {
  await assertVisibleStatuses(deps, caller, input.statusIds)
  const limit = maxBoardsOf(planOf(deps.plans, caller.plan))
  return writerOf(deps).run(async (tx) => {
    // one user's creates take turns, so concurrent ones cannot all pass the limit
    await lockForTransaction(tx, `statusd:boards:${caller.userId}`)
    if (limit !== null && (await countBoardsOf(tx, caller.userId)) >= limit)
      throw planLimitReached(limit, 'boards')
    const now = nowIso()
    const row: BoardRow = {
      id: newId(),
      share_id: newShareId(),
      owner_id: caller.userId,
      name: input.name,
      access_type: input.accessType ?? 'private',
      status_ids: JSON.stringify(input.statusIds),
      created_at: now,
      updated_at: now,
      version: 1,
    }
    await insertBoard(tx, row)
    return row
  })
}

/**
 * True when every status of the board is within the caller's reach: always for a session or an
 * unconfined key; for a key confined to statuses, only a board of its statuses alone
 * (docs/accounts.md#scoped-keys). A board also showing another status is none of its business:
 * it would learn that status's id and could rename or delete what shows it.
 */
const boardWithinReach = (row: BoardRow, caller: Caller): boolean => {
  const reach = caller.limits?.statusIds
  return reach == null || boardStatusIds(row).every((id) => reach.includes(id))
}

/** GET /v1/boards — the caller's boards, oldest first (a confined key's: those within its reach). */
export const listBoards = async (deps: ServiceDeps, caller: Caller): Promise<BoardRow[]> =>
  (await listBoardsOf(deps.db, caller.userId)).filter((row) => boardWithinReach(row, caller))

/**
 * The caller's own board; anyone else's, or none, is 404 (a board's existence does not leak),
 * and so is one holding a status beyond the reach of the caller's confined key.
 */
export async function ownBoard(
  deps: ServiceDeps,
  caller: Caller,
  boardId: string,
): Promise<BoardRow> {
  const row = await findBoardById(deps.db, boardId)
  if (!row || row.owner_id !== caller.userId || !boardWithinReach(row, caller))
    throw notFound('Board not found')
  return row
}

/** PATCH /v1/boards/:boardId — the owner changes its name, statuses or access. */
export async function updateBoard(
  deps: ServiceDeps,
  caller: Caller,
  boardId: string,
  input: BoardUpdate,
): Promise<BoardRow> {
  const current = await ownBoard(deps, caller, boardId)
  if (input.statusIds !== undefined) await assertVisibleStatuses(deps, caller, input.statusIds)
  const changes = {
    updated_at: nowIso(),
    ...(input.name !== undefined && { name: input.name }),
    ...(input.statusIds !== undefined && { status_ids: JSON.stringify(input.statusIds) }),
    ...(input.accessType !== undefined && { access_type: input.accessType }),
  }
  const updated = await writerOf(deps).run((tx) => updateBoardRow(tx, current.id, changes))
  if (!updated) throw notFound('Board not found')
  return { ...current, ...changes, version: current.version + 1 }
}

/** DELETE /v1/boards/:boardId — the owner's; its statuses stay as they are. */
export async function deleteBoard(
  deps: ServiceDeps,
  caller: Caller,
  boardId: string,
): Promise<void> {
  const current = await ownBoard(deps, caller, boardId)
  if (!(await writerOf(deps).run((tx) => deleteBoardRow(tx, current.id))))
    throw notFound('Board not found')
}

/** The public board with this share id; a private or unknown one is the same 404. */
export async function publicBoardRow(deps: ServiceDeps, shareId: string): Promise<BoardRow> {
  const row = await findBoardByShareId(deps.db, shareId)
  if (row?.access_type !== 'public') throw notFound('Board not found')
  return row
}

/**
 * GET /b/:shareId/json — what anyone sees of a public board: each status's share view while
 * it is public; a private (or deleted) one is a tile with `status: null`, nothing of it shown.
 */
export async function publicBoard(deps: ServiceDeps, shareId: string): Promise<PublicBoard> {
  const row = await publicBoardRow(deps, shareId)
  const tiles: PublicBoard['tiles'] = []
  for (const statusId of boardStatusIds(row)) {
    const status = await findStatus(deps.db, statusId)
    tiles.push({
      statusId,
      status: status?.access_type === 'public' ? await shareViewOf(deps, status) : null,
    })
  }
  return { shareId: row.share_id, name: row.name, tiles }
}
