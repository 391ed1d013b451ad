import type { BoardsTable, Db } from '../../db/database.ts'

// The boards table (docs/app.md#boards-and-the-wall); status_ids is JSON text.

export type BoardRow = Omit<BoardsTable, 'version'> & { version: number }

export const insertBoard = async (db: Db, row: BoardRow): Promise<void> => {
  await db.insertInto('boards').values(row).execute()
}

export const findBoardById = (db: Db, id: string): Promise<BoardRow | undefined> =>
  db.selectFrom('boards').selectAll().where('id', '=', id).executeTakeFirst()

export const findBoardByShareId = (db: Db, shareId: string): Promise<BoardRow | undefined> =>
  db.selectFrom('boards').selectAll().where('share_id', '=', shareId).executeTakeFirst()

export const listBoardsOf = (db: Db, ownerId: string): Promise<BoardRow[]> =>
  db
    .selectFrom('boards')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

export async function countBoardsOf(db: Db, ownerId: string): Promise<number> {
  const row = await db
    .selectFrom('boards')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function updateBoardRow(
  db: Db,
  id: string,
  changes: Partial<Pick<BoardRow, 'name' | 'status_ids' | 'access_type' | 'updated_at'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('boards')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function deleteBoardRow(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('boards').where('id', '=', id).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}
