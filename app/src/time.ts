import { signal } from '@preact/signals'

// Relative times ("5 min ago") that stay true: one clock for the whole app, ticking every
// 15 s, so every time on screen is refreshed together and nothing keeps its own timer.

export const now = signal(Date.now())
setInterval(() => {
  now.value = Date.now()
}, 15_000)

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", then the date. */
export function relativeTime(iso: string, at: number = now.value): string {
  // a clock slightly behind the server's must not say "in 2 s"
  const seconds = Math.max(0, Math.round((at - Date.parse(iso)) / 1000))
  if (seconds < 45) return 'just now'
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min ago`
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`
  const days = Math.round(seconds / 86_400)
  if (days < 30) return days === 1 ? 'yesterday' : `${days} days ago`
  return new Date(iso).toLocaleDateString()
}

/** The full date and time, for a title and the <time> element. */
export const fullTime = (iso: string): string => new Date(iso).toLocaleString()

/** A time of day as `14:45` in the viewer's time, with the date too when not on `at`'s day. */
export function clockTime(iso: string, at: number = now.value): string {
  const when = new Date(iso)
  const time = when.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
  if (when.toDateString() === new Date(at).toDateString()) return time
  return `${when.toLocaleDateString([], { weekday: 'short', day: 'numeric', month: 'short' })} ${time}`
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
