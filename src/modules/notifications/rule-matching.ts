// Which rules an event fires (docs/notifications.md#rules): pure, so a table test covers it.

/** A rule's `when`, as stored in `notification_rules.condition` (JSON). */
export type RuleCondition =
  | 'any'
  | 'stale'
  | { changesTo: readonly (string | null)[] }
  | { leaves: readonly (string | null)[] }

/** The stored condition, or null when it is not one this version knows (it fires nothing). */
export function parseCondition(json: string): RuleCondition | null {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return null
  }
  if (value === 'any' || value === 'stale') return value
  if (value && typeof value === 'object') {
    const list =
      (value as Record<string, unknown>).changesTo ?? (value as Record<string, unknown>).leaves
    if (!Array.isArray(list)) return null
    return 'changesTo' in value
      ? { changesTo: list as (string | null)[] }
      : { leaves: list as (string | null)[] }
  }
  return null
}

/**
 * True when a rule with this condition fires for the event: `any` on every change; `changesTo`
 * when the new value is in the list; `leaves` when the previous value is in the list and the
 * new one is not; `stale` on a status going stale only (a change is not staleness, nor the
 * reverse).
 */
export function ruleMatches(
  condition: RuleCondition | null,
  eventType: string,
  status: { value: string | null; previousValue: string | null },
): boolean {
  if (condition === null) return false
  if (condition === 'stale') return eventType === 'status.stale'
  if (eventType !== 'status.changed') return false
  if (condition === 'any') return true
  if ('changesTo' in condition) return condition.changesTo.includes(status.value)
  return condition.leaves.includes(status.previousValue) && !condition.leaves.includes(status.value)
}

/** The rule's channel ids (JSON array), or null for every channel of its user. */
export function parseChannelIds(json: string | null): Set<string> | null {
  if (json === null) return null
  try {
    const value: unknown = JSON.parse(json)
    return Array.isArray(value) ? new Set(value.filter((v) => typeof v === 'string')) : null
  } catch {
    return new Set()
  }
}
