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
 * The entry's cron expression read by croner: 5 fields, on a clock without time zone (UTC
 * stands for the schedule's local wall clock; fireInstant places each wall-clock fire in
 * the time zone), so that croner decides which minutes match and the daylight-saving rules
 * are the same for every entry (docs/api.md#schedules).
 */
const wallClockCron = (expression: string): Cron =>
  new Cron(expression, { timezone: 'UTC', mode: '5-part', paused: true })

const MINUTE_MS = 60_000
const DAY_MS = 24 * 60 * MINUTE_MS

const formats = new Map<string, Intl.DateTimeFormat>()

/** The wall-clock time in the zone at the instant, as milliseconds of a UTC clock. */
function wallOf(instantMs: number, timezone: string): number {
  let format = formats.get(timezone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formats.set(timezone, format)
  }
  const part: Record<string, number> = {}
  for (const { type, value } of format.formatToParts(instantMs)) part[type] = Number(value)
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = part
  return Date.UTC(year, month - 1, day, hour, minute, second) + (instantMs % 1000)
}

/** The zone's offset from UTC at the instant. */
const offsetAt = (instantMs: number, timezone: string): number =>
  wallOf(instantMs, timezone) - instantMs

/**
 * The instant a wall-clock time of the zone fires: the time itself; of a time repeated by a
 * daylight-saving change, its first occurrence; of a time skipped by one, the first minute
 * after the gap (the instant of the change).
 */
function fireInstant(wallMs: number, timezone: string): number {
  const before = offsetAt(wallMs - DAY_MS, timezone)
  const after = offsetAt(wallMs + DAY_MS, timezone)
  // no change within a day either side: the one instant
  if (before === after) return wallMs - before
  const valid = [wallMs - before, wallMs - after]
    .filter((at) => wallOf(at, timezone) === wallMs)
    .sort((a, b) => a - b)
  if (valid[0] !== undefined) return valid[0]
  // skipped: the change lies between the two readings; find its minute
  let low = Math.min(wallMs - before, wallMs - after)
  let high = Math.max(wallMs - before, wallMs - after)
  while (high - low > MINUTE_MS) {
    const mid = low + Math.floor((high - low) / 2 / MINUTE_MS) * MINUTE_MS
    if (offsetAt(mid, timezone) === after) high = mid
    else low = mid
  }
  return high
}

/**
 * The earliest wall-clock time in the zone whose fire can come after the instant: the
 * instant's wall-clock time, less what a daylight-saving change within a day moves back.
 */
function earliestWall(instantMs: number, timezone: string): number {
  const least = Math.min(
    offsetAt(instantMs - DAY_MS, timezone),
    offsetAt(instantMs, timezone),
    offsetAt(instantMs + DAY_MS, timezone),
  )
  return instantMs + least - MINUTE_MS
}

/** The latest wall-clock time in the zone whose fire can come at or before the instant. */
function latestWall(instantMs: number, timezone: string): number {
  const most = Math.max(
    offsetAt(instantMs - DAY_MS, timezone),
    offsetAt(instantMs, timezone),
    offsetAt(instantMs + DAY_MS, timezone),
  )
  return instantMs + most + MINUTE_MS
}

/** The entry's fires strictly after the instant, earliest first, at most `count`. */
function entryFiresAfter(cron: Cron, timezone: string, afterMs: number, count: number): number[] {
  const fires: number[] = []
  let wall: Date | null = new Date(earliestWall(afterMs, timezone))
  while (fires.length < count) {
    wall = cron.nextRun(wall)
    if (wall === null) break
    const at = fireInstant(wall.getTime(), timezone)
    // walls skipped by a change all fire at its instant: once
    if (at > afterMs && at !== fires.at(-1)) fires.push(at)
  }
  return fires
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
    if (wallClockCron(expression).nextRun(new Date(0)) === null) return 'never fires'
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
    for (const at of entryFiresAfter(wallClockCron(entry.cron), timezone, after.getTime(), count))
      byInstant.set(at, entry)
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
  const end = atOrBefore.getTime()
  let latest: Fire | null = null
  for (const entry of entries) {
    const cron = wallClockCron(entry.cron)
    // previousRuns is strictly before its reference: one millisecond later takes the wall itself
    let wall: Date | undefined = new Date(latestWall(end, timezone) + 1)
    for (;;) {
      wall = cron.previousRuns(1, wall)[0]
      if (wall === undefined) break
      const at = fireInstant(wall.getTime(), timezone)
      if (at <= after.getTime()) break
      if (at <= end) {
        if (!latest || at >= latest.at.getTime()) latest = { at: new Date(at), entry }
        break
      }
      wall = new Date(wall.getTime())
    }
  }
  return latest
}
