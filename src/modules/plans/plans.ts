import { readFileSync } from 'node:fs'
import { Ajv, type ErrorObject } from 'ajv'
import type { Static } from 'typebox'
import { Type } from 'typebox'

const Limit = (maximum: number) => Type.Union([Type.Integer({ minimum: 0, maximum }), Type.Null()])
/** The most days of history a plan may keep short of forever (null): about 2 700 years. */
export const MAX_HISTORY_DAYS = 1_000_000
/** The longest a private share link may last on any plan: about ten years. */
export const MAX_SHARE_LINK_DAYS = 3_650
/** Boards a user may have on a plan that does not say (the free plan's; docs/app.md#boards). */
export const DEFAULT_MAX_BOARDS = 3
/** How many notification rules a user may have on a plan that does not say (the free plan's). */
export const DEFAULT_NOTIFICATION_RULES = 25
/** How long a private share link may last on a plan that does not say (the free plan's). */
export const DEFAULT_SHARE_LINK_DAYS = 7

export const PlanSchema = Type.Object(
  {
    descriptionLinks: Type.Boolean(),
    accessSettings: Type.Boolean(),
    maxStatuses: Limit(Number.MAX_SAFE_INTEGER),
    requestsPerMinute: Limit(Number.MAX_SAFE_INTEGER),
    // note: bounded so that "now minus that many days" stays a date (a larger value made every
    // value update fail with a RangeError); null keeps history forever
    historyDays: Limit(MAX_HISTORY_DAYS),
    // note: optional, so that a plans file written before private share links existed still
    // loads; a plan without it caps links at DEFAULT_SHARE_LINK_DAYS (shareLinkDaysOf). Never
    // null: a private link always ends (docs/accounts.md#private-share-links)
    shareLinkDays: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SHARE_LINK_DAYS })),
    // note: optional too (plans files from before boards); absent: DEFAULT_MAX_BOARDS
    maxBoards: Type.Optional(Limit(Number.MAX_SAFE_INTEGER)),
    // note: optional, as shareLinkDays: a plan without it allows DEFAULT_NOTIFICATION_RULES
    // (notificationRulesOf); null: unlimited (docs/notifications.md#rules)
    maxNotificationRules: Type.Optional(Limit(Number.MAX_SAFE_INTEGER)),
  },
  { additionalProperties: false },
)
export type Plan = Static<typeof PlanSchema>
export type Plans = Record<string, Plan>

const PlansFileSchema = Type.Record(
  Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' }),
  PlanSchema,
  // note: a Record is patternProperties; without this, names missing the pattern go unchecked
  { additionalProperties: false },
)

/** The first thing wrong with a plans file, in words an operator can act on. */
function describeError(e: ErrorObject, all: ErrorObject[]): string {
  const where = e.instancePath || '/'
  if (e.keyword === 'required') {
    const missing = all
      .filter((o) => o.keyword === 'required' && o.instancePath === e.instancePath)
      .map((o) => (o.params as { missingProperty: string }).missingProperty)
    return `${where} lacks ${missing.join(', ')}`
  }
  // a property the schema forbids: a badly spelt plan name, or an unknown plan property
  if (e.keyword === 'additionalProperties') {
    const name = `${e.instancePath}/${(e.params as { additionalProperty: string }).additionalProperty}`
    return e.instancePath === ''
      ? `${name} is not a valid plan name (a lowercase letter, then up to 31 of a-z 0-9 _ -)`
      : `${name} is not a known plan property`
  }
  return `${where} ${e.message}`
}

/** Built-in plan table (docs/api.md#plans); `null` means unlimited. */
export const DEFAULT_PLANS: Plans = {
  free: {
    descriptionLinks: false,
    accessSettings: false,
    maxStatuses: 25,
    requestsPerMinute: 60,
    historyDays: 7,
    shareLinkDays: 7,
    maxBoards: 3,
    maxNotificationRules: 25,
  },
  pro: {
    descriptionLinks: true,
    accessSettings: true,
    maxStatuses: 10_000,
    requestsPerMinute: 1_200,
    historyDays: 365,
    shareLinkDays: 30,
    maxBoards: 50,
    maxNotificationRules: 10_000,
  },
}

/** The most boards a user may have on this plan, null: no limit (docs/app.md#boards). */
export const maxBoardsOf = (plan: Plan): number | null =>
  plan.maxBoards === undefined ? DEFAULT_MAX_BOARDS : plan.maxBoards

/** The most days a private share link may last on this plan (docs/api.md#plans). */
export const shareLinkDaysOf = (plan: Plan): number => plan.shareLinkDays ?? DEFAULT_SHARE_LINK_DAYS

/** How many notification rules a user on this plan may have (null: unlimited). */
export const notificationRulesOf = (plan: Plan): number | null =>
  plan.maxNotificationRules === undefined ? DEFAULT_NOTIFICATION_RULES : plan.maxNotificationRules

/** Reads and validates an operator's plans file; it replaces the built-in table. */
export function loadPlansFile(path: string): Plans {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw new Error(`PLANS_FILE ${path}: ${(err as Error).message}`)
  }
  // note: Ajv, which the routes load anyway (typebox/compile would load twice the modules);
  // the schema is ours, so it is not checked against the meta-schema, a start-up cost
  const validate = new Ajv({ strict: true, allErrors: true, validateSchema: false }).compile(
    PlansFileSchema,
  )
  if (!validate(parsed)) {
    const errors = validate.errors ?? []
    const first = errors[0]
    throw new Error(`PLANS_FILE ${path}: ${first ? describeError(first, errors) : 'invalid'}`)
  }
  const plans = parsed as Plans
  if (Object.keys(plans).length === 0) throw new Error(`PLANS_FILE ${path}: defines no plan`)
  return plans
}

const rank = (limit: number | null): number => (limit === null ? Number.POSITIVE_INFINITY : limit)

/** The plan with the most features and the highest limits: given to the first user. */
export function mostCapablePlan(plans: Plans): string {
  const score = (p: Plan) => [
    Number(p.descriptionLinks) + Number(p.accessSettings),
    rank(p.maxStatuses),
    rank(p.requestsPerMinute),
    rank(p.historyDays),
    shareLinkDaysOf(p),
  ]
  const names = Object.keys(plans)
  names.sort((a, b) => {
    const [sa, sb] = [score(plans[a] as Plan), score(plans[b] as Plan)]
    for (let i = 0; i < sa.length; i++) {
      const d = (sb[i] as number) - (sa[i] as number)
      if (d !== 0 && !Number.isNaN(d)) return d
    }
    return a.localeCompare(b)
  })
  return names[0] as string
}
