import type { Kysely } from 'kysely'
import { migrationSteps } from '../engines.ts'

// PostgreSQL only: the counters of a status (`statuses.version`, `statuses.change_count`,
// `status_history.change_no`) become bigint. As `integer` they stopped at 2^31 − 1: after
// about 2.1 billion writes to one status (25 days at 1 000 a second) every further write to
// it failed for good. SQLite's INTEGER is 64-bit already. The values come back as numbers
// (postgres/open-postgres.ts parses int8 so); they stay far below 2^53.
//
// note: engine-specific, so the step is the engine's (MigrationSteps.bigintCounters; on
// PostgreSQL, postgres/postgres-migration-steps.ts). PostgreSQL rewrites both tables, holding
// them locked: about a minute for 10 M history rows, at the first start of this version
// (docs/operations.md, upgrading).

export const up = (db: Kysely<unknown>): Promise<void> =>
  migrationSteps(db).bigintCounters(db, 'up')

export const down = (db: Kysely<unknown>): Promise<void> =>
  migrationSteps(db).bigintCounters(db, 'down')
