/** Current time as RFC 3339 UTC with milliseconds; stored as text so it sorts the same on every engine. */
export const nowIso = (): string => new Date().toISOString()
