import { signal } from '@preact/signals'
import { locale, t } from './i18n.ts'

// Dates and times in the viewer's language (`locale`) and time zone (the browser's), with
// `Intl`. Relative times ("5 minutes ago") stay true: one clock for the whole app, ticking
// every 15 s, so every time on screen is refreshed together and nothing keeps its own timer.

export const now = signal(Date.now())
setInterval(() => {
  now.value = Date.now()
}, 15_000)

/**
 * The tag to give `Intl`: the browser's own tag of the language shown when it has one (an
 * `en-GB` browser writes English dates the British way, `de-AT` German ones the Austrian
 * way), else the language's code.
 */
export function intlLocale(): string {
  const shown = locale.value
  const tags = typeof navigator === 'undefined' ? [] : (navigator.languages ?? [])
  return tags.find((tag) => tag.toLowerCase().split(/[-_]/)[0] === shown) ?? shown
}

/** One formatter per language and options, made on first use. */
function cached<F>(make: (code: string) => F): () => F {
  const made = new Map<string, F>()
  return () => {
    const code = intlLocale()
    let format = made.get(code)
    if (!format) {
      format = make(code)
      made.set(code, format)
    }
    return format
  }
}

const RELATIVE = cached((code) => new Intl.RelativeTimeFormat(code, { numeric: 'auto' }))
const FULL = cached(
  (code) => new Intl.DateTimeFormat(code, { dateStyle: 'medium', timeStyle: 'medium' }),
)
const MEDIUM = cached(
  (code) => new Intl.DateTimeFormat(code, { dateStyle: 'medium', timeStyle: 'short' }),
)
const SHORT = cached(
  (code) => new Intl.DateTimeFormat(code, { dateStyle: 'short', timeStyle: 'short' }),
)
const DATE = cached((code) => new Intl.DateTimeFormat(code, { dateStyle: 'medium' }))
const CLOCK = cached(
  (code) => new Intl.DateTimeFormat(code, { hour: '2-digit', minute: '2-digit' }),
)
const DAY = cached(
  (code) => new Intl.DateTimeFormat(code, { weekday: 'short', day: 'numeric', month: 'short' }),
)

/** "just now", "5 minutes ago", "3 hours ago", "yesterday", "4 days ago", then the date. */
export function relativeTime(iso: string, at: number = now.value): string {
  // a clock slightly behind the server's must not say "in 2 s"
  const seconds = Math.max(0, Math.round((at - Date.parse(iso)) / 1000))
  if (seconds < 45) return t('app.time.justNow')
  const relative = RELATIVE()
  if (seconds < 3600) return relative.format(-Math.max(1, Math.round(seconds / 60)), 'minute')
  if (seconds < 86_400) return relative.format(-Math.round(seconds / 3600), 'hour')
  const days = Math.round(seconds / 86_400)
  if (days < 30) return relative.format(-days, 'day')
  return DATE().format(new Date(iso))
}

/** The full date and time, for a title and the <time> element. */
export const fullTime = (iso: string): string => FULL().format(new Date(iso))

/** The date and the time of day without seconds, as a list or a sentence shows a moment. */
export const dateTime = (iso: string): string => MEDIUM().format(new Date(iso))

/** The date in digits and the time of day, for a table's narrow column. */
export const shortDateTime = (iso: string): string => SHORT().format(new Date(iso))

/** A time of day as `14:45` in the viewer's time, with the date too when not on `at`'s day. */
export function clockTime(iso: string, at: number = now.value): string {
  const when = new Date(iso)
  const time = CLOCK().format(when)
  if (when.toDateString() === new Date(at).toDateString()) return time
  return `${DAY().format(when)} ${time}`
}

/**
 * The next `HH:MM` in the viewer's time as an instant: today, or tomorrow once it has passed
 * (as `statusd set --until` counts it, docs/cli.md#values-that-end).
 */
export function nextClockTime(hhmm: string, at: number = Date.now()): string {
  const [hours, minutes] = hhmm.split(':').map(Number)
  const when = new Date(at)
  when.setHours(hours ?? 0, minutes ?? 0, 0, 0)
  if (when.getTime() <= at) when.setDate(when.getDate() + 1)
  return when.toISOString()
}
