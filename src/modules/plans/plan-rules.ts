import { createRequire } from 'node:module'
import { LinkifyIt } from 'linkify-it'
import { planFeatureUnavailable, planLimitReached } from '../../lib/errors.ts'
import type { Plan } from './plans.ts'

let linkify: LinkifyIt | undefined

/**
 * The link finder, built on first use (its pattern over every top-level domain takes about
 * 15 ms to compile, which a start should not pay). note: fuzzyLink (bare domains like
 * example.com) is off by default in linkify-it 6, so it is switched on; fuzzyEmail is on by
 * default, and an e-mail address is a link a reader can follow, so it counts. Bare domains
 * are matched against IANA's whole list of top-level domains (the `tlds` package), not
 * linkify-it's short default list, which lets `example.dev` or `example.xyz` through.
 */
function linkFinder(): LinkifyIt {
  linkify ??= new LinkifyIt({ fuzzyLink: true }).tlds(
    createRequire(import.meta.url)('tlds') as string[],
    true,
  )
  return linkify
}

/** A port after a host name (`example.com:8080/desk`), which hides the domain from linkify-it. */
const PORT = /(\w):\d{1,5}(?=[/?#\s]|$)/g
/** A scheme linkify-it does not know (`sftp://`, `git://`, `ssh://`, `https:example.com`). */
const SCHEME = /\b[a-z][a-z\d+.-]*:(?:\/\/)?/gi

/**
 * True when the text holds a URL, a bare domain or an e-mail address. What linkify-it
 * passes over but a reader would still follow (a bare domain with a port, a URL of a
 * scheme it does not know) is tested again with the port and the scheme taken out, so the
 * domain that remains is found as a bare domain.
 */
export const containsLink = (text: string): boolean =>
  linkFinder().test(text) ||
  (text.includes(':') && linkFinder().test(text.replace(PORT, '$1').replace(SCHEME, ' ')))

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
 * Throws 402 when the input uses a feature the plan lacks (SPEC §4). Sending the current
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
