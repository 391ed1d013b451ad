import type { Kysely } from 'kysely'
import { migrationSteps } from '../engines.ts'

// Per-user request counters shared by the instances on one database
// (docs/postgres.md#scaling-out-behind-a-load-balancer): each instance's own counts let N
// instances allow N times a plan's requestsPerMinute.
//
// note: engine-specific, so the step is the engine's (MigrationSteps.rateLimitCounters).
// PostgreSQL gets an UNLOGGED table (counts are not worth a WAL record per request, nor
// surviving a crash); SQLite, where one process serves, counts in memory and gets nothing.
// The table is not part of statusd's data (not in the `DB` type, not copied by `statusd copy`).

export async function up(db: Kysely<unknown>): Promise<void> {
  await migrationSteps(db).rateLimitCounters(db, 'up')
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await migrationSteps(db).rateLimitCounters(db, 'down')
}
