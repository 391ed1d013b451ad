import type { Kysely } from 'kysely'
import { migrationSteps } from '../engines.ts'

// SQLite only: statuses becomes a WITHOUT ROWID table, stored in the order of its primary key
// `id`. A status found by its id (every PATCH reads and updates one; every history insert
// checks its foreign key) is then one B-tree search instead of two: the id's automatic index,
// then the table by rowid. That is one page fewer to read per lookup, which counts once the
// table outgrows the caches (docs/performance.md, "The tables' layout"). Lookups by share id
// or by key still go through their unique index, as before.
//
// Stored by id, one owner's statuses no longer sit together in creation order, as a rowid
// table kept them: a list page would read one page per status (2.5× slower at 1 M
// statuses). So the list's index, statuses_owner_created, also carries the columns a list
// page shows (status_key, share_id, name): a page is read from the index alone, and is
// faster than before. PostgreSQL keeps its heap table and indexes.
//
// note: engine-specific, so the step is the engine's (MigrationSteps.clusteredStatuses; on
// SQLite, sqlite/sqlite-migration-steps.ts). The rebuild copies every status once: about
// half a minute for 1 M statuses, at the first start of this version (docs/operations.md,
// upgrading).

export const up = (db: Kysely<unknown>): Promise<void> =>
  migrationSteps(db).clusteredStatuses(db, 'up')

export const down = (db: Kysely<unknown>): Promise<void> =>
  migrationSteps(db).clusteredStatuses(db, 'down')
