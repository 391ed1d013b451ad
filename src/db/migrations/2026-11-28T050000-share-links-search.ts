import type { Kysely } from 'kysely'

// Discovery (docs/accounts.md#discovery) and private share links
// (docs/accounts.md#private-share-links).
//
// - statuses.name_search: the name folded for search (NFKC, lower case: statuses.service.ts
//   searchableName), written with every name. Folded in the application, not by SQL `lower()`:
//   SQLite's folds ASCII letters only, PostgreSQL's every letter, and a search must find the
//   same statuses on both. Null for rows written before this version: no status was listed
//   then (`listed` came with the previous migration, default 0), and listing one writes it.
// - statuses_listed: search reads only listed public statuses, in creation order, and tests
//   their names in the index itself (it holds name_search), so the statuses nobody listed
//   cost nothing and a listed one costs an index entry (docs/performance.md#search).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('statuses').addColumn('name_search', 'text').execute()
  await db.schema
    .createIndex('statuses_listed')
    .on('statuses')
    .columns(['listed', 'access_type', 'created_at', 'id', 'name_search'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('statuses_listed').execute()
  await db.schema.alterTable('statuses').dropColumn('name_search').execute()
}
