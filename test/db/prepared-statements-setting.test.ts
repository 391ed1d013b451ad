import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { openPostgres } from '../../src/db/postgres/open-postgres.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'

// docs/postgres.md#behind-pgbouncer: DATABASE_PREPARED_STATEMENTS=off sends every statement of
// the pool unnamed, whoever names it (the rate limit's upsert does). Checked on the server
// itself, so it runs without PgBouncer: a named statement stays in the session's
// pg_prepared_statements, an unnamed one does not.

/** Runs one named statement twice on a pool of one connection; the names the session keeps. */
async function namesKept(url: string, preparedStatements: boolean): Promise<string[]> {
  const database = openPostgres(url, { poolSize: 1, preparedStatements })
  try {
    const counter = database.requestCounter
    assert.ok(counter, 'PostgreSQL counts requests in the database')
    for (let i = 0; i < 2; i++) await counter.hit('prepared-statements-test', 60_000)
    // note: a pool of one: the same session as the statements above
    const { rows } = await sql<{
      name: string
    }>`select name from pg_prepared_statements order by name`.execute(database.db)
    return rows.map((row) => row.name)
  } finally {
    await database.close()
  }
}

describe('DATABASE_PREPARED_STATEMENTS [postgres]', { skip: postgresOnly }, () => {
  it('on: a statement prepared by name stays prepared in its session', async (t) => {
    const fresh = await testDatabase(t)
    await migrated(fresh.url)
    // the statement docs/postgres.md#behind-pgbouncer names as prepared by name: if that
    // changes, so must the page
    assert.deepEqual(await namesKept(fresh.url, true), ['statusd_rate_limit_hit'])
  })

  it("the start's check finds named statements kept straight to PostgreSQL: no problem to report", async (t) => {
    // behind a pooler that loses them it refuses the start: test/multi/pgbouncer.test.ts
    const fresh = await testDatabase(t)
    const told: string[] = []
    const database = openPostgres(fresh.url, {
      poolSize: 2,
      onSetupProblem: (message) => told.push(message),
    })
    try {
      assert.equal(await database.checkSetup?.(), undefined)
      assert.deepEqual(told, [])
    } finally {
      await database.close()
    }
  })

  it('off: the same statement runs unnamed, and nothing stays prepared', async (t) => {
    const fresh = await testDatabase(t)
    await migrated(fresh.url)
    assert.deepEqual(await namesKept(fresh.url, false), [])
  })
})

async function migrated(url: string): Promise<void> {
  const database = openPostgres(url, { poolSize: 1 })
  try {
    await migrateToLatest(database.db)
  } finally {
    await database.close()
  }
}
