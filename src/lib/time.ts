let lastMs = 0

/**
 * Current time as RFC 3339 UTC with milliseconds; stored as text so it sorts the same on
 * every engine. Strictly increasing within the process: two statuses created in the same
 * millisecond still list in creation order (a burst borrows a millisecond or two).
 */
export function nowIso(): string {
  const now = Date.now()
  lastMs = now > lastMs ? now : lastMs + 1
  return new Date(lastMs).toISOString()
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/i

/**
 * Parses an ISO 8601 date (`2030-12-31`, midnight UTC) or date-time with a zone
 * (`2030-12-31T23:59:59Z`, `…+02:00`; `t` and `z` in lower case too, as RFC 3339 allows) into
 * a Date; null for anything else.
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
  const at = new Date(text)
  return Number.isNaN(at.getTime()) ? null : at
}
