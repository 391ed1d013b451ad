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
