import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import SQLite from 'better-sqlite3'
import { type CompiledQuery, Kysely, PostgresDialect, SqliteDialect } from 'kysely'
import pg from 'pg'
import type { DB, StatusRow } from '../../src/db/database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { notificationRuleExists } from '../../src/modules/outbox/outbox.service.ts'
import {
  listHistory,
  pruneHistories,
  pruneHistory,
} from '../../src/modules/statuses/history.repository.ts'
import { searchListedStatuses } from '../../src/modules/statuses/search.repository.ts'
import {
  findStatusesForWrite,
  listOwnedStatuses,
  writeStatusRows,
} from '../../src/modules/statuses/statuses.repository.ts'
import { freshDatabase, TEST_ENGINE, type TestDatabase } from '../helpers/engine.ts'
import { onEngine } from '../helpers/store.ts'
import { statusRow, userRow } from './fixtures.ts'

// The hot paths must stay index searches at any size (docs/performance.md, "Scale"): a page
// deep in a list of a million statuses, a page deep in a long history, and a value update's
// pruning of a long history. These tests read the plans of the statements the repositories
// really send. On PostgreSQL, sequential scans and sorts are switched off first, so a tiny
// test table shows the plan the indexes allow (a Seq Scan or Sort left means none does).

/** A migrated database whose Kysely logs every statement it sends, and the engine's EXPLAIN. */
interface PlanStore {
  db: Kysely<DB>
  /** Runs the repository call and returns the plans of the statements it sent. */
  plansOf(call: (db: Kysely<DB>) => Promise<unknown>): Promise<{ sql: string; plan: string }[]>
  close(): Promise<void>
}

async function openPlanStore(): Promise<PlanStore> {
  let captured: CompiledQuery[] = []
  const log = { log: (event: { query: CompiledQuery }) => void captured.push(event.query) }
  let fresh: TestDatabase | undefined
  let sqlite: SQLite.Database | undefined
  let pool: pg.Pool | undefined
  let db: Kysely<DB>
  if (TEST_ENGINE === 'sqlite') {
    sqlite = new SQLite(':memory:')
    db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }), ...log })
  } else {
    fresh = await freshDatabase()
    pool = new pg.Pool({ connectionString: fresh.url, max: 1 })
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), ...log })
  }
  await migrateToLatest(db)
  const explain = async (query: CompiledQuery): Promise<string> => {
    const params = query.parameters as unknown[]
    if (sqlite)
      return (
        sqlite.prepare(`explain query plan ${query.sql}`).all(...params) as { detail: string }[]
      )
        .map((r) => r.detail)
        .join('\n')
    const client = await (pool as pg.Pool).connect()
    try {
      await client.query('begin')
      await client.query('set local enable_seqscan = off')
      await client.query('set local enable_sort = off')
      const { rows } = await client.query(`explain ${query.sql}`, params)
      return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')
    } finally {
      await client.query('rollback')
      client.release()
    }
  }
  return {
    db,
    async plansOf(call) {
      captured = []
      await call(db)
      const out: { sql: string; plan: string }[] = []
      for (const query of captured) out.push({ sql: query.sql, plan: await explain(query) })
      return out
    },
    async close() {
      await db.destroy()
      await fresh?.drop()
    },
  }
}

/** No full scan and no sort the index does not give, on either engine. */
function assertSearchesOnly(plan: string): void {
  if (TEST_ENGINE === 'sqlite') {
    assert.doesNotMatch(plan, /^SCAN /m, plan)
    assert.doesNotMatch(plan, /TEMP B-TREE/, plan)
  } else {
    assert.doesNotMatch(plan, /Seq Scan/, plan)
    assert.doesNotMatch(plan, /\bSort\b/, plan)
  }
}

describe(onEngine('query plans of the hot paths'), () => {
  let store: PlanStore
  before(async () => {
    store = await openPlanStore()
  })
  after(async () => {
    await store.close()
  })

  it('a list page after a cursor seeks the (owner_id, created_at, id) index to the cursor (on SQLite, reading the index alone)', async () => {
    const [list] = await store.plansOf((db) =>
      listOwnedStatuses(db, 'owner', {
        limit: 51,
        after: { createdAt: '2030-01-01T00:00:00.000Z', id: 'x' },
      }),
    )
    assert.ok(list)
    assertSearchesOnly(list.plan)
    // the cursor is part of the index search, not a filter applied to the owner's every row;
    // on SQLite the index holds every column the page shows, so the table is not read at all
    if (TEST_ENGINE === 'sqlite')
      assert.equal(
        list.plan,
        'SEARCH statuses USING COVERING INDEX statuses_owner_created (owner_id=? AND (created_at,id)>(?,?))',
      )
    else
      assert.match(
        list.plan,
        /Index (Only )?Scan using statuses_owner_created[^\n]*\n\s*Index Cond: \(\(owner_id = [^)]+\) AND \(ROW\(created_at, id\) > ROW\(/,
      )
  })

  it('a search page reads the listed public statuses from the statuses_listed index alone, in order, then fetches the page by primary key', async () => {
    const [search] = await store.plansOf((db) =>
      searchListedStatuses(db, ['room'], {
        limit: 21,
        after: { createdAt: '2030-01-01T00:00:00.000Z', id: 'x' },
      }),
    )
    assert.ok(search)
    // the names are tested in the index (it holds name_search): statuses nobody listed are
    // never read, and a listed one costs an index entry (docs/performance.md#search)
    if (TEST_ENGINE === 'sqlite')
      assert.match(
        search.plan,
        /SEARCH statuses USING COVERING INDEX statuses_listed \(listed=\? AND access_type=\? AND \(created_at,id\)>\(\?,\?\)\)/,
      )
    else assert.match(search.plan, /Index Only Scan using statuses_listed/)
    assert.doesNotMatch(search.plan, TEST_ENGINE === 'sqlite' ? /^SCAN /m : /Seq Scan/, search.plan)
  })

  it('a history page after a cursor walks the primary key down from the cursor', async () => {
    for (const cutoff of [null, '2030-01-01T00:00:00.000Z']) {
      const [history] = await store.plansOf((db) =>
        listHistory(db, 'status', { cutoff, keepChangeNo: 90, before: 40, limit: 51 }),
      )
      assert.ok(history)
      assertSearchesOnly(history.plan)
      if (TEST_ENGINE === 'sqlite')
        assert.match(
          history.plan,
          // the table is stored in primary-key order (WITHOUT ROWID): the page's rows are together
          /^SEARCH h USING PRIMARY KEY \(status_id=\? AND change_no<\?\)$/m,
        )
      else
        assert.match(
          history.plan,
          /Index Scan Backward using status_history_pk[^\n]*\n\s*Index Cond: \(\(status_id = [^)]+\) AND \(change_no < (?:\d+|'\d+'::bigint)\)\)/,
        )
    }
  })

  it('a batch of value updates reads, writes and prunes through primary keys, pruning only expired entries', async () => {
    await store.db
      .insertInto('users')
      .values(userRow({ id: 'batch-owner' }))
      .execute()
    const read = ['batch-1', 'batch-2'].map(
      (id) => ({ ...statusRow('batch-owner', { id }), version: 1 }) as StatusRow,
    )
    await store.db.insertInto('statuses').values(read).execute()
    const statements = await store.plansOf(async (db) => {
      // whether anyone is notified read beside the rows: one search of the rules' key each
      await findStatusesForWrite(db, ['batch-1', 'batch-2'], [], notificationRuleExists)
      await writeStatusRows(
        db,
        read.map((row) => ({ ...row, value: 'ON', change_count: 2, version: 2 })),
        ['value', 'change_count', 'version'],
      )
      await pruneHistory(db, 'status', '2030-01-01T00:00:00.000Z', 90)
      await pruneHistories(db, [
        { statusId: 'batch-1', cutoff: '2030-01-01T00:00:00.000Z', keepChangeNo: 90 },
        { statusId: 'batch-2', cutoff: '2030-01-01T00:00:00.000Z', keepChangeNo: 70 },
      ])
    })
    assert.equal(statements.length, 4)
    type Planned = (typeof statements)[number]
    const [lookup, write, prune, prunes] = statements as [Planned, Planned, Planned, Planned]
    // the statuses of a batch pruned together: each status's range is still a search
    for (const { plan } of [lookup, prune, prunes]) assertSearchesOnly(plan)
    // the rows given are a list of values to go through; every table is searched
    assertSearchesOnly(write.plan.replace(/^SCAN \d+-ROW VALUES CLAUSE$/m, ''))
    if (TEST_ENGINE === 'sqlite')
      // the table is stored in primary-key order (WITHOUT ROWID): one search, no index first
      assert.match(lookup.plan, /^SEARCH statuses USING PRIMARY KEY \(id=\?\)$/m)
    else assert.match(lookup.plan, /Index Scan using statuses_pkey on statuses/)
    // each row given finds its stored one by the primary key, and updates it
    if (TEST_ENGINE === 'postgres')
      assert.match(write.plan, /Conflict Arbiter Indexes: statuses_pkey/)
    // the delete's range runs from the oldest entry to the oldest entry within retention, and
    // at most one batch wide (the oldest entry found once more for that bound), each found by
    // a walk of the primary key that stops at it: none reads the whole history
    if (TEST_ENGINE === 'sqlite') {
      const searches = prune.plan.split('\n').filter((l) => l.includes('status_history'))
      assert.equal(searches.length, 4, prune.plan)
      for (const line of searches)
        assert.match(line, /^SEARCH status_history USING PRIMARY KEY \(status_id=\?/)
      assert.match(searches[0] as string, /\(status_id=\? AND change_no>\? AND change_no<\?\)$/)
    } else {
      assert.equal(prune.plan.match(/InitPlan/g)?.length, 3, prune.plan)
      assert.match(
        prune.plan,
        /\n {2}-> {2}Index Scan using status_history_pk on status_history [^\n]*\n\s*Index Cond: \(\(status_id = [^)]+\) AND \(change_no >= \$0\) AND \(change_no < \(\$1 \+ (?:\d+|'\d+'::bigint)\)\) AND \(change_no < COALESCE\(\$2, (?:\d+|'\d+'::bigint)\)\)\)/,
      )
    }
  })
})
