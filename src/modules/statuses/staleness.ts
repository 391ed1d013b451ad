import type { StatusRow, StatusRowUpdate } from '../../db/database.ts'

// Staleness (docs/notifications.md#staleness): a status with `staleAfter` that goes that many
// seconds without a value update reads stale until its next one. The row keeps `stale_at`,
// the moment the current silence turns stale (the last value update, or the creation, plus
// stale_after), so reads judge it against the clock alone, and the stale detector finds what
// is due through an index; `stale_notified_at` marks the silence announced (once).

/** How often each instance looks for silences turned stale, unless told otherwise (STALE_CHECK_INTERVAL_MS). */
export const STALE_CHECK_INTERVAL_MS = 10_000

/** When a silence that began at `sinceIso` turns stale; null without staleAfter. */
export function staleAtOf(sinceIso: string, staleAfter: number | null): string | null {
  if (staleAfter === null) return null
  return new Date(Date.parse(sinceIso) + staleAfter * 1000).toISOString()
}

/** What a reader sees of a row's staleness at `nowMs`: computed, never stored. */
export function staleFieldsOf(
  row: Pick<StatusRow, 'stale_after' | 'stale_at'>,
  nowMs: number,
): { staleAfter: number | null; stale: boolean; staleSince: string | null } {
  const stale = row.stale_at !== null && Date.parse(row.stale_at) <= nowMs
  return {
    staleAfter: row.stale_after === null ? null : Number(row.stale_after),
    stale,
    staleSince: stale ? row.stale_at : null,
  }
}

/**
 * The staleness columns an update sets, beside its other changes: a value update starts a
 * new silence (stale_at moves, the old silence's announcement is cleared); a new staleAfter
 * re-times the current silence. `now` is the update's time.
 *
 * note: a staleAfter change keeps the announcement of a silence that is still stale under
 * the new setting (it was told once; the detector must not tell it again), and clears it
 * when the status is no longer stale, so that the next silence is told.
 */
export function staleChanges(
  current: StatusRow,
  staleAfter: number | null | undefined,
  valueWritten: boolean,
  now: string,
): Partial<StatusRowUpdate> {
  const after = staleAfter === undefined ? current.stale_after : staleAfter
  if (valueWritten) {
    // the hot path: a status without staleness changes no column of it
    if (after === null && staleAfter === undefined) return {}
    return {
      ...(staleAfter !== undefined && { stale_after: staleAfter }),
      stale_at: staleAtOf(now, after),
      ...(current.stale_notified_at !== null && { stale_notified_at: null }),
    }
  }
  if (staleAfter === undefined) return {}
  const staleAt = staleAtOf(current.value_updated_at ?? current.created_at, after)
  const stillStale = staleAt !== null && staleAt <= now
  return {
    stale_after: staleAfter,
    stale_at: staleAt,
    ...(!stillStale && current.stale_notified_at !== null && { stale_notified_at: null }),
  }
}
