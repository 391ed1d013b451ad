import type { Plan, Plans } from './plans.ts'

/**
 * The plan a user is on. A user whose plan an operator has since removed from the table
 * falls back to `free` (or the first plan), so a plans-file edit never locks anyone out.
 */
export function planOf(plans: Plans, name: string): Plan {
  // note: own properties only: a plan once named `constructor` or `toString` must not find
  // Object.prototype's function once the plan is gone
  if (Object.hasOwn(plans, name)) return plans[name] as Plan
  return Object.hasOwn(plans, 'free') ? (plans.free as Plan) : (Object.values(plans)[0] as Plan)
}
