import { Cron } from 'croner'

/** One entry of a schedule: at each minute `cron` names, the status takes `value`. */
export interface ScheduleEntry {
  cron: string
  value: string
  colorNo?: number
}

/** One fire: the instant, and the entry it sets. */
export interface Fire {
  at: Date
  entry: ScheduleEntry
}

/**
 * The entry's cron expression read by croner: 5 fields, in the time zone. A time of day a
 * daylight-saving change skips fires at the first minute after the gap, and a repeated one
 * fires once, at its first occurrence (croner's fixed-time rule; `no-wildcard`: a minute and
 * an hour without `*` or a step, lists and ranges included). Entries whose minute or hour has
 * `*` or a step follow elapsed time, as cron does (docs/api.md#schedules).
 */
export function cronOf(expression: string, timezone: string): Cron {
  return new Cron(expression, {
    timezone,
    mode: '5-part',
    fixedTimeRule: 'no-wildcard',
    paused: true,
  })
}

/**
 * Why the expression is not a 5-field cron expression, or null when it is. A pattern that
 * croner takes but that never fires (the 30th of February) is refused too.
 */
export function cronProblem(expression: string): string | null {
  // croner also takes nicknames (`@daily`) and 6 or 7 fields; a schedule takes 5
  if (expression.trim().split(/\s+/).length !== 5)
    return 'must have 5 fields: minute hour day-of-month month day-of-week'
  try {
    if (cronOf(expression, 'UTC').nextRun(new Date(0)) === null) return 'never fires'
  } catch (err) {
    return `is not a valid cron expression (${(err as Error).message.replace(/^CronPattern: /, '')})`
  }
  return null
}

/** The time zone's IANA name as the platform spells it, or null when it knows none such. */
export function canonicalTimeZone(name: string): string | null {
  // a UTC offset ("+02:00") is a time zone to Intl, but not an IANA name, and has no rules
  if (!/^[A-Za-z]/.test(name)) return null
  try {
    return new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return null
  }
}

/**
 * The next `count` fires strictly after `after`, of all entries together, earliest first.
 * Two entries that fire at the same instant make one fire: the later entry's, as if it were
 * written last.
 */
export function nextFires(
  entries: readonly ScheduleEntry[],
  timezone: string,
  after: Date,
  count: number,
): Fire[] {
  const byInstant = new Map<number, ScheduleEntry>()
  for (const entry of entries)
    for (const at of cronOf(entry.cron, timezone).nextRuns(count, after))
      byInstant.set(at.getTime(), entry)
  return [...byInstant.entries()]
    .sort(([a], [b]) => a - b)
    .slice(0, count)
    .map(([at, entry]) => ({ at: new Date(at), entry }))
}

/**
 * The latest fire at or before `atOrBefore` and after `after`, or null: what a worker that
 * was not running when fires fell due applies once, the latest of them.
 */
export function latestFire(
  entries: readonly ScheduleEntry[],
  timezone: string,
  after: Date,
  atOrBefore: Date,
): Fire | null {
  let latest: Fire | null = null
  // previousRuns is strictly before its reference: one millisecond later takes the instant itself
  const reference = new Date(atOrBefore.getTime() + 1)
  for (const entry of entries) {
    const [at] = cronOf(entry.cron, timezone).previousRuns(1, reference)
    if (at && at > after && (!latest || at >= latest.at)) latest = { at, entry }
  }
  return latest
}
