import type { Plan, Plans } from './plans.ts'

/**
 * The plan a user is on. A user whose plan an operator has since removed from the table
 * falls back to `free` (or the first plan), so a plans-file edit never locks anyone out.
 */
export function planOf(plans: Plans, name: string): Plan {
  return plans[name] ?? plans.free ?? (Object.values(plans)[0] as Plan)
}
