import type { Db } from '../../db/database.ts'
import {
  countRulesOfUser,
  deleteRuleOf,
  deleteRulesOfStatusBatch,
  insertRuleUnlessPresent,
} from './default-rules.repository.ts'

// Subscribers are notified by default (docs/notifications.md#rules). Becoming a subscriber
// happens in statuses (accepting an invitation or a link, signing up through one, following
// a status), which sits below notifications and may not call it; so the rows those writes
// must make or remove in their own transaction go through here, below statuses, as the
// events a write records do (outbox.service.ts). Everything else about rules —
// the API, validation, plan limits, matching — is notifications' (notifications/rules.*).

/** The rule a new subscriber gets: told of every change (`{"when": "any"}`). */
export const DEFAULT_RULE_CONDITION = '"any"'

/**
 * Turns the default rule on for a user who just became a subscriber of the status, unless
 * they have a rule for it already (theirs stays as they set it). True when it was made.
 */
export const turnOnDefaultRule = (
  db: Db,
  statusId: string,
  userId: string,
  at: string,
): Promise<boolean> =>
  insertRuleUnlessPresent(db, {
    status_id: statusId,
    user_id: userId,
    condition: DEFAULT_RULE_CONDITION,
    at,
  })

/** The rule the creator of a status in the app gets: told of every change made by others. */
export const CREATOR_RULE_CONDITION = '"any"'

/**
 * Gives the user who just created the status with a session (the app) the rule
 * `{"when": "any", "byOthers": true}` on all their channels, unless that would take them
 * past `maxRules`, their plan's rule limit (null: unlimited). True when it was made.
 */
export async function turnOnCreatorRule(
  db: Db,
  statusId: string,
  userId: string,
  at: string,
  maxRules: number | null,
): Promise<boolean> {
  if (maxRules !== null && (await countRulesOfUser(db, userId)) >= maxRules) return false
  return insertRuleUnlessPresent(db, {
    status_id: statusId,
    user_id: userId,
    condition: CREATOR_RULE_CONDITION,
    by_others: 1,
    at,
  })
}

/** Removes a user's rule for a status they gave up (left, or were removed from). */
export const removeRule = (db: Db, statusId: string, userId: string): Promise<void> =>
  deleteRuleOf(db, statusId, userId)

/**
 * Removes at most `limit` rules of a deleted status (the history sweep calls it batch by
 * batch, so a status with many followers is no bigger a transaction than one with few).
 */
export const removeRulesOfDeletedStatus = (
  db: Db,
  statusId: string,
  limit: number,
): Promise<number> => deleteRulesOfStatusBatch(db, statusId, limit)
