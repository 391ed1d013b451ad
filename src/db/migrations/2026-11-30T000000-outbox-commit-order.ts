import type { Kysely } from 'kysely'
import { migrationSteps } from '../engines.ts'

// outbox_events.tx_id: on PostgreSQL, the id of the transaction that recorded the event
// (`xid8`, filled in by the column's default `pg_current_xact_id()`), indexed. With it every
// instance reads the status events other instances committed, in commit order and without
// gaps, to keep its live streams right even when a NOTIFY never arrives
// (docs/postgres.md#live-updates-across-instances). SQLite has one process and needs no
// such order: the column is there, always null, so that `statusd copy` moves the table
// between the engines like any other.
//
// note: engine-specific, so the step is the engine's (MigrationSteps.outboxCommitOrder).

export const up = (db: Kysely<unknown>): Promise<void> =>
  migrationSteps(db).outboxCommitOrder(db, 'up')

export const down = (db: Kysely<unknown>): Promise<void> =>
  migrationSteps(db).outboxCommitOrder(db, 'down')
