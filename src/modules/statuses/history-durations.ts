import { validationError } from '../../lib/errors.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { type HistoryStep, historySteps } from './history.repository.ts'
import type { HistoryDurations } from './history.schemas.ts'
import { type HistoryAccess, ownerPlanOf, retentionCutoff } from './history.service.ts'
import { assertMayReadDetail } from './statuses.access.ts'
import type { AccessLevel } from './statuses.schemas.ts'

// Time in each value over a range (docs/api.md#time-in-each-value): what a status's history
// says about how long it held each value, summed on the server so that the app need not
// fetch every entry of a busy status to draw its bar.

/**
 * Entries read per statement; requests run between statements, so a range over a busy
 * status's long history never holds the event loop (SQLite) for all of it
 * (docs/decisions/0016-bounded-work-on-large-tables.md).
 */
export const DURATIONS_BATCH = 5_000

/**
 * Sums time in each value over [from, to], fed entries newest first. Each entry's value
 * holds from its time until the next entry's (the newest one's until `to`); the walk is done
 * with the entry in force at `from`. Entries go in change order: if a clock went back, an
 * entry's segment ends no later than the one after it began, so no time counts twice.
 */
export class DurationSum {
  readonly #from: number
  readonly #to: number
  readonly #byValue = new Map<string, number>()
  /** Where the segment of the next (older) entry ends. */
  #end: number
  done = false

  constructor(from: number, to: number) {
    this.#from = from
    this.#to = to
    this.#end = to
  }

  /** Adds an entry's segment; sets `done` once the entry in force at `from` is in. */
  add(step: { value: string; at: string }): void {
    const start = Date.parse(step.at)
    const ms = Math.min(this.#end, this.#to) - Math.max(start, this.#from)
    if (ms > 0) this.#byValue.set(step.value, (this.#byValue.get(step.value) ?? 0) + ms)
    this.#end = Math.min(this.#end, start)
    if (start <= this.#from) this.done = true
  }

  result(): HistoryDurations {
    const tracked = [...this.#byValue.values()].reduce((a, b) => a + b, 0)
    const values = [...this.#byValue]
      .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
      .map(([value, ms]) => ({ value, seconds: ms / 1000, share: ms / tracked }))
    return {
      from: new Date(this.#from).toISOString(),
      to: new Date(this.#to).toISOString(),
      trackedSeconds: tracked / 1000,
      values,
    }
  }
}

/**
 * GET …/history/durations — time in each value over a range, from the entries a caller may
 * read in the history (the same access, the same retention). Its cost is the entries since
 * `from`, read DURATIONS_BATCH at a time from the newest, never a whole history at once.
 */
export async function statusDurations(
  deps: ServiceDeps,
  access: HistoryAccess,
  range: { from: string; to?: string },
): Promise<HistoryDurations> {
  const status = assertMayReadDetail(
    access.status,
    access.role,
    (s) => s.access_type_history as AccessLevel,
    'history',
  )
  const now = deps.clock?.now() ?? Date.now()
  const from = Date.parse(range.from)
  const to = Math.min(range.to === undefined ? now : Date.parse(range.to), now)
  if (!(from < now)) throw validationError([{ field: 'from', message: 'must be earlier than now' }])
  if (!(from < to)) throw validationError([{ field: 'to', message: 'must be later than from' }])

  const plan = await ownerPlanOf(deps.db, deps.plans, status)
  const cutoff = retentionCutoff(plan, new Date(now))
  const keepChangeNo = Number(status.change_count)
  // an entry past retention is not shown (listHistory), nor anything older: the walk ends
  const hidden = (step: HistoryStep) =>
    cutoff !== null && step.at < cutoff && step.change_no !== keepChangeNo

  const sum = new DurationSum(from, to)
  let before: number | undefined
  for (;;) {
    const steps = await historySteps(deps.db, status.id, before, DURATIONS_BATCH)
    for (const step of steps) {
      if (hidden(step)) return sum.result()
      sum.add(step)
      if (sum.done) return sum.result()
    }
    const last = steps.at(-1)
    if (last === undefined || steps.length < DURATIONS_BATCH) return sum.result()
    before = last.change_no
    await new Promise((resolve) => setImmediate(resolve))
  }
}
