import type { Db } from '../../db/database.ts'
import { claimRowsForUpdate } from '../../db/locks.ts'
import type { ClaimedWork, DueWindow, TimedSource } from './timed-worker.ts'

// Values that end (docs/api.md#values-that-end), as a source of the timed worker: a status
// whose value_until has passed gets its value_after, written for the user who set the end.

/** The ends due by `window.now`, claimed and cleared in `tx`. */
async function claimDue(tx: Db, window: DueWindow, limit: number): Promise<ClaimedWork> {
  const rows = await claimRowsForUpdate(
    tx,
    tx
      .selectFrom('statuses')
      .select(['id', 'value_until', 'value_after', 'value_until_by'])
      .where('value_until', '<=', window.now)
      .orderBy('value_until')
      .orderBy('id')
      .limit(limit),
  ).execute()
  if (rows.length === 0) return { claimed: 0, writes: [] }
  // cleared whether written or skipped; the version moves, as the status reads differently
  await tx
    .updateTable('statuses')
    .set((eb) => ({
      value_until: null,
      value_after: null,
      value_until_by: null,
      version: eb('version', '+', 1),
    }))
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .execute()
  const writes = rows.flatMap((r) =>
    // an end missed by more than the catch-up window is skipped
    r.value_until !== null &&
    r.value_until > window.since &&
    r.value_after !== null &&
    r.value_until_by !== null
      ? [{ statusId: r.id, userId: r.value_until_by, value: r.value_after }]
      : [],
  )
  return { claimed: rows.length, writes }
}

/** The earliest pending end. */
async function nextDue(db: Db): Promise<string | null> {
  const row = await db
    .selectFrom('statuses')
    .select((eb) => eb.fn.min('value_until').as('next'))
    .executeTakeFirst()
  return (row?.next as string | null | undefined) ?? null
}

export const valueEnds: TimedSource = { name: 'value ends', claimDue, nextDue }
