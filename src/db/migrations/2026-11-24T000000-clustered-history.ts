import type { Kysely } from 'kysely'
import { migrationSteps } from '../engines.ts'

// SQLite only: status_history becomes a WITHOUT ROWID table, stored in the order of its
// primary key (status_id, change_no). A history page then reads its rows from one or two
// B-tree pages instead of one page per row (rows were stored in the order they were
// written, interleaved across every status), and a value update writes one history page
// instead of two. At 10 M rows: history pages 1.8× faster (p50), 8× (p99); 3.3 → 2.0 pages
// logged per update (docs/performance.md). PostgreSQL keeps its heap table and index.
//
// note: engine-specific, so the step is the engine's (MigrationSteps.clusteredHistory; on
// SQLite, sqlite/sqlite-migration-steps.ts). The rebuild copies every history row once: about
// 1 minute for 10 M rows, at the first start of this version (docs/operations.md, upgrading).

export const up = (db: Kysely<unknown>): Promise<void> =>
  migrationSteps(db).clusteredHistory(db, 'up')

export const down = (db: Kysely<unknown>): Promise<void> =>
  migrationSteps(db).clusteredHistory(db, 'down')
