import { parse as parseDuration, toSeconds } from 'iso8601-duration'
import { UsageError } from './output.ts'

// `statusd set … --for 45m` and `--until 14:00` (docs/cli.md#values-that-end): the end of a
// value as the API's `valueUntil` takes it, an ISO 8601 duration or an instant. The API
// checks the bounds (1 minute to 366 days ahead); this only reads what a person types.

/** `45m`, `1h30m`, `2d`, `1d12h` as `d`, `h` and `m` parts, in that order, or ISO `PT45M`. */
const SHORT = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$/i
const ISO_DURATION = /^P(?=\d|T\d)(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+S)?)?$/i

/** `--for`: a duration as the API's ISO 8601 duration (`45m` → `PT45M`, `2d` → `P2D`). */
export function durationOf(text: string, flag = '--for'): string {
  const given = text.trim()
  if (ISO_DURATION.test(given)) return given.toUpperCase()
  const match = SHORT.exec(given)
  if (!given || !match)
    throw new UsageError(`${flag} takes a duration such as 45m, 1h30m, 2d or PT45M, got "${text}"`)
  const [, d, h, m] = match
  const time = `${h ? `${Number(h)}H` : ''}${m ? `${Number(m)}M` : ''}`
  return `P${d ? `${Number(d)}D` : ''}${time ? `T${time}` : ''}`
}

/** `--since 7d`: the instant that long before `now`. */
export function sinceOf(text: string, now: Date): string {
  const seconds = toSeconds(parseDuration(durationOf(text, '--since')), now)
  return new Date(now.getTime() - seconds * 1000).toISOString()
}

/** `3h 12m`, `2d 4h`, `45s`: a time as a person reads it, to the minute past an hour. */
export function spanOf(seconds: number): string {
  const s = Math.round(seconds)
  if (s < 60) return `${s}s`
  const days = Math.floor(s / 86_400)
  const hours = Math.floor((s % 86_400) / 3600)
  const minutes = Math.floor((s % 3600) / 60)
  const parts = [days && `${days}d`, hours && `${hours}h`, !days && minutes && `${minutes}m`]
  return parts.filter(Boolean).join(' ') || '0m'
}

const CLOCK = /^([01]?\d|2[0-3]):([0-5]\d)$/
/** An instant with its offset: a date, a time and `Z` or `±hh:mm`. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/i

/**
 * `--until`: `14:00` is the next 14:00 in local time (today, or tomorrow once it has passed);
 * an instant with its offset (`2026-12-24T18:00:00+01:00`) is taken as it is.
 */
export function untilOf(text: string, now: Date): string {
  const given = text.trim()
  const clock = CLOCK.exec(given)
  if (clock) {
    const at = new Date(now)
    at.setHours(Number(clock[1]), Number(clock[2]), 0, 0)
    // note: setDate keeps the local time of day across a daylight-saving change
    if (at.getTime() <= now.getTime()) at.setDate(at.getDate() + 1)
    return at.toISOString()
  }
  if (INSTANT.test(given) && !Number.isNaN(Date.parse(given))) return new Date(given).toISOString()
  throw new UsageError(
    `--until takes a local time such as 14:00, or an instant such as 2026-12-24T18:00:00+01:00, got "${text}"`,
  )
}

/** A time on the same day as `now` as `14:45`, on another day with its date too, local. */
export function localTime(iso: string, now: Date): string {
  const at = new Date(iso)
  const pad = (n: number) => String(n).padStart(2, '0')
  const clock = `${pad(at.getHours())}:${pad(at.getMinutes())}`
  return at.toDateString() === now.toDateString()
    ? clock
    : `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${clock}`
}
