import { writerOf } from '../../db/writer.ts'
import { ApiError, type FieldError } from '../../lib/errors.ts'
import { creationIso } from '../../lib/time.ts'
import { planOf } from '../plans/plan-of.ts'
import { notificationRulesOf } from '../plans/plans.ts'
import type { ServiceDeps } from '../service-deps.ts'
import { accessById } from '../statuses/sharing.service.ts'
import type { Caller } from '../statuses/statuses.service.ts'
import {
  countRulesOf,
  deleteRule,
  findRule,
  ownChannelIds,
  type RuleRow,
  upsertRule,
} from './rules.repository.ts'
import type { Rule, RuleCondition, RuleInput } from './rules.schemas.ts'

// Notification rules (docs/notifications.md#rules): one per user and status, about a status
// the user may read. Who may read is the statuses module's word (accessById): a caller who
// may not read the status gets the same 404 as reading it would.

const toRule = (statusId: string, row: RuleRow | undefined): Rule =>
  row === undefined
    ? { statusId, when: null, channels: null, byOthers: false, createdAt: null, updatedAt: null }
    : {
        statusId,
        when: JSON.parse(row.condition) as RuleCondition,
        channels: row.channel_ids === null ? null : (JSON.parse(row.channel_ids) as string[]),
        byOthers: Number(row.by_others) === 1,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      }

/** GET /v1/status/:statusId/notifications — the caller's rule; `when: null` when none. */
export async function getRule(deps: ServiceDeps, caller: Caller, statusId: string): Promise<Rule> {
  const { status } = await accessById(deps.db, caller, statusId)
  return toRule(status.id, await findRule(deps.db, status.id, caller.userId))
}

/**
 * PUT /v1/status/:statusId/notifications — sets the caller's rule, replacing theirs. The
 * channels named must all be the caller's (422 naming the ones that are not); a new rule
 * beyond the plan's `maxNotificationRules` → 402 planLimitReached.
 */
export async function putRule(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
  input: RuleInput,
): Promise<Rule> {
  return writerOf(deps).run(async (tx) => {
    const { status } = await accessById(tx, caller, statusId)
    const channels = input.channels ?? null
    if (channels !== null) {
      const own = await ownChannelIds(tx, caller.userId, channels)
      const errors: FieldError[] = channels.flatMap((id, i) =>
        own.has(id) ? [] : [{ field: `channels.${i}`, message: 'is not one of your channels' }],
      )
      if (errors.length > 0)
        throw new ApiError(422, 'validationError', 'Some channels are not yours', errors)
    }
    const existing = await findRule(tx, status.id, caller.userId)
    if (!existing) {
      const limit = notificationRulesOf(planOf(deps.plans, caller.plan))
      if (limit !== null && (await countRulesOf(tx, caller.userId)) >= limit)
        throw new ApiError(
          402,
          'planLimitReached',
          `Your plan allows at most ${limit} notification rules`,
        )
    }
    await upsertRule(
      tx,
      {
        status_id: status.id,
        user_id: caller.userId,
        condition: JSON.stringify(input.when),
        channel_ids: channels === null ? null : JSON.stringify(channels),
        by_others: input.byOthers === true ? 1 : 0,
      },
      creationIso(),
    )
    return toRule(status.id, await findRule(tx, status.id, caller.userId))
  })
}

/**
 * DELETE /v1/status/:statusId/notifications — turns the caller's notifications for the status
 * off; 204 whether or not they had a rule (turning off twice is harmless).
 */
export async function deleteRuleOf(
  deps: ServiceDeps,
  caller: Caller,
  statusId: string,
): Promise<void> {
  await writerOf(deps).run(async (tx) => {
    const { status } = await accessById(tx, caller, statusId)
    await deleteRule(tx, status.id, caller.userId)
  })
}
