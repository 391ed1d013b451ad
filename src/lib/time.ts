/** How far creation times may run ahead of the clock in a burst of creations. */
export const CREATION_LEAD_MS = 1000

/** The latest time this process has stamped a creation with. */
let lastCreatedMs = 0

function clockMs(): number {
  const now = Date.now()
  // the clock was set back (by more than a burst could borrow): follow it
  if (lastCreatedMs > now + CREATION_LEAD_MS) lastCreatedMs = now
  return now
}

/**
 * Current time as RFC 3339 UTC with milliseconds, stored as text so it sorts the same on
 * every engine. Never earlier than a creation this process stamped: a status created in a
 * burst and changed at once is not updated before it was created.
 */
export const nowIso = (): string => new Date(Math.max(clockMs(), lastCreatedMs)).toISOString()

/**
 * The time to stamp a new row (status, user, API key, share) with: strictly increasing
 * within the process, so rows created in the same millisecond still list in creation order.
 * A burst borrows the next milliseconds, at most CREATION_LEAD_MS ahead of the clock; past
 * that (over a thousand creations a second, sustained), creations share a millisecond and
 * list by id among themselves.
 * note: only creations borrow. When every write borrowed, a sustained stream of writes
 * pushed the stored times ever further ahead of the clock.
 */
export function creationIso(): string {
  const now = clockMs()
  lastCreatedMs = now > lastCreatedMs ? now : Math.min(lastCreatedMs + 1, now + CREATION_LEAD_MS)
  return new Date(lastCreatedMs).toISOString()
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d|60)(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/i

/**
 * Parses an ISO 8601 date (`2030-12-31`, midnight UTC) or date-time with a zone
 * (`2030-12-31T23:59:59Z`, `…+02:00`; `t` and `z` in lower case and a leap second too, as
 * RFC 3339 allows) into a Date; null for anything else.
 * note: `new Date()` alone also takes `Dec 31 2030` and rolls `2030-02-30` over to March.
 */
export function parseIsoInstant(text: string): Date | null {
  const parts = ISO_DATE.exec(text) ?? ISO_DATE_TIME.exec(text)
  if (!parts) return null
  const [year, month, day] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day
  )
    return null
  // a leap second (`23:59:60Z`, which RFC 3339 allows and JavaScript does not parse) is the
  // second after :59, as PostgreSQL reads it
  const leap = parts[6] === '60'
  const at = new Date(leap ? text.replace(/:60(?=[.zZ+-])/, ':59') : text)
  if (leap) at.setTime(at.getTime() + 1000)
  return Number.isNaN(at.getTime()) ? null : at
}
