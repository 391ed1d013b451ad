import type { Migration } from 'kysely/migration'
import * as initial from './2026-11-22T000000-initial.ts'
import * as idempotencyKeys from './2026-11-22T010000-idempotency-keys.ts'
import * as sharing from './2026-11-23T000000-sharing.ts'
import * as clusteredHistory from './2026-11-24T000000-clustered-history.ts'
import * as clusteredStatuses from './2026-11-24T010000-clustered-statuses.ts'
import * as apiKeySuccessor from './2026-11-25T000000-api-key-successor.ts'
import * as bigintCounters from './2026-11-25T010000-bigint-counters.ts'
import * as idempotentEtag from './2026-11-26T000000-idempotent-etag.ts'
import * as historySweep from './2026-11-27T000000-history-sweep.ts'
import * as people from './2026-11-28T000000-people.ts'
import * as shareLinksSearch from './2026-11-28T050000-share-links-search.ts'
import * as appAndNotifications from './2026-11-29T000000-app-and-notifications.ts'
import * as deliveryLog from './2026-11-29T010000-delivery-log.ts'
import * as outboxCommitOrder from './2026-11-30T000000-outbox-commit-order.ts'
import * as rateLimitCounters from './2026-11-30T010000-rate-limit-counters.ts'
import * as invitationMails from './2026-12-01T000000-invitation-mails.ts'
import * as historyKey from './2026-12-01T030000-history-key.ts'

/** Every migration, by name; names sort in the order they apply. */
export const migrations: Record<string, Migration> = {
  '2026-11-22T000000-initial': initial,
  '2026-11-22T010000-idempotency-keys': idempotencyKeys,
  '2026-11-23T000000-sharing': sharing,
  '2026-11-24T000000-clustered-history': clusteredHistory,
  '2026-11-24T010000-clustered-statuses': clusteredStatuses,
  '2026-11-25T000000-api-key-successor': apiKeySuccessor,
  '2026-11-25T010000-bigint-counters': bigintCounters,
  '2026-11-26T000000-idempotent-etag': idempotentEtag,
  '2026-11-27T000000-history-sweep': historySweep,
  '2026-11-28T000000-people': people,
  '2026-11-28T050000-share-links-search': shareLinksSearch,
  '2026-11-29T000000-app-and-notifications': appAndNotifications,
  '2026-11-29T010000-delivery-log': deliveryLog,
  '2026-11-30T000000-outbox-commit-order': outboxCommitOrder,
  '2026-11-30T010000-rate-limit-counters': rateLimitCounters,
  '2026-12-01T000000-invitation-mails': invitationMails,
  '2026-12-01T030000-history-key': historyKey,
}
