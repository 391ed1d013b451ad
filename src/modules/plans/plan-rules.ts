import { planFeatureUnavailable, planLimitReached } from '../../lib/errors.ts'
import { containsLink } from '../../lib/links.ts'
import type { Plan } from './plans.ts'

/** The access settings a plan gates, with their defaults. */
export const ACCESS_SETTING_DEFAULTS = {
  accessTypeUserList: 'owner',
  accessTypeHistory: 'private',
} as const
type AccessSetting = keyof typeof ACCESS_SETTING_DEFAULTS

interface PlanCheckedInput {
  description?: string
  accessTypeUserList?: string
  accessTypeHistory?: string
}

/**
 * Throws 402 when the input uses a feature the plan lacks (docs/api.md#plans). Sending the current
 * value or the default of an access setting is always allowed.
 */
export function assertPlanAllows(
  plan: Plan,
  input: PlanCheckedInput,
  current?: Record<AccessSetting, string>,
): void {
  if (!plan.descriptionLinks && input.description !== undefined && containsLink(input.description))
    throw planFeatureUnavailable('links in descriptions', 'description')
  if (plan.accessSettings) return
  for (const field of Object.keys(ACCESS_SETTING_DEFAULTS) as AccessSetting[]) {
    const wanted = input[field]
    if (wanted === undefined) continue
    if (wanted === ACCESS_SETTING_DEFAULTS[field] || wanted === current?.[field]) continue
    throw planFeatureUnavailable('access-type settings', field)
  }
}

/** Throws 402 planLimitReached when the owner already has as many statuses as the plan allows. */
export function assertUnderStatusLimit(plan: Plan, ownedCount: number): void {
  if (plan.maxStatuses !== null && ownedCount >= plan.maxStatuses)
    throw planLimitReached(plan.maxStatuses)
}
