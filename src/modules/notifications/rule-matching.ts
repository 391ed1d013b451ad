// Which rules an event fires (docs/notifications.md#rules): pure, so a table test covers it.

/** A rule's `when`, as stored in `notification_rules.condition` (JSON). */
export type RuleCondition =
  | 'any'
  | 'stale'
  | { changesTo?: readonly (string | null)[]; leaves?: readonly (string | null)[] }

/** The stored condition, or null when it is not one this version knows (it fires nothing). */
export function parseCondition(json: string): RuleCondition | null {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return null
  }
  if (value === 'any' || value === 'stale') return value
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null
  const { changesTo, leaves, ...rest } = value as Record<string, unknown>
  if (Object.keys(rest).length > 0) return null
  if (changesTo === undefined && leaves === undefined) return null
  if (changesTo !== undefined && !Array.isArray(changesTo)) return null
  if (leaves !== undefined && !Array.isArray(leaves)) return null
  return {
    ...(changesTo !== undefined && { changesTo: changesTo as (string | null)[] }),
    ...(leaves !== undefined && { leaves: leaves as (string | null)[] }),
  }
}

/** Who a rule belongs to and whether it skips its own user's changes (`byOthers`). */
export interface RuleOwner {
  userId: string
  byOthers: boolean
}

/**
 * True when a rule with this condition fires for the event: `any` on every change;
 * `changesTo` when the new value is in the list; `leaves` when the previous value is in the
 * list and the new one is not; both together when either does; `stale` on a status going
 * stale only (a change is not staleness, nor the reverse). With `byOthers`, a change made by
 * the rule's own user (`by`: whoever the change was made for, a timed change's setter
 * included) fires nothing; a silence is made by no one.
 */
export function ruleMatches(
  condition: RuleCondition | null,
  eventType: string,
  status: { value: string | null; previousValue: string | null },
  who?: { rule: RuleOwner; by: string | null },
): boolean {
  if (condition === null) return false
  if (condition === 'stale') return eventType === 'status.stale'
  if (eventType !== 'status.changed') return false
  if (who?.rule.byOthers === true && who.by === who.rule.userId) return false
  if (condition === 'any') return true
  if (condition.changesTo?.includes(status.value) === true) return true
  const leaves = condition.leaves ?? []
  return leaves.includes(status.previousValue) && !leaves.includes(status.value)
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
