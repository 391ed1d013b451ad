import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import { isStorageUnavailable } from '../../src/db/storage-error.ts'
import { makeApp } from '../helpers/app.ts'
import { defer } from '../helpers/cleanup.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'

// docs/api.md#errors, docs/postgres.md#when-postgresql-is-down: a connection lost in the middle of
// a query (a server restart or failover, an administrator's pg_terminate_backend) fails that query,
// which answers 503, and nothing else: the process lives on and the pool opens a fresh connection.
// Before the fix, the dying client's 'error' event had no listener once pg-pool had handed it out,
// and it crashed the whole process (this test file with it).

test('a pooled connection killed mid-query answers 503, and the service lives on', {
  skip: postgresOnly,
}, async (ctx) => {
  const fresh = await testDatabase(ctx)
  const t = await makeApp(ctx, { databaseUrl: fresh.url })
  // the killer: a connection of its own, outside the app's pool
  const admin = createDatabase(fresh.url, { poolSize: 1 })
  defer(ctx, () => admin.close())
  const owner = await t.user()
  const created = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'ON' })
  assert.equal(created.statusCode, 201)

  // the outcome is caught at once: the query may fail before pg_terminate_backend's own
  // answer comes back, and a rejection nobody has caught yet fails the test on its own
  const sleeping = sql`select pg_sleep(30)`.execute(t.database.db).then(
    () => new Error('the query ended without an error'),
    (err: unknown) => err,
  )
  let pid: number | undefined
  // note: a deadline, not a count of tries: on a loaded machine the query may take a while
  // to show as active
  const deadline = Date.now() + 15_000
  while (pid === undefined && Date.now() < deadline) {
    const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity
      where query like ${`%pg_sleep(30)%`} and state = 'active' and pid <> pg_backend_pid()
        and query not like '%pg_stat_activity%' and datname = current_database()`.execute(admin.db)
    pid = rows[0]?.pid
    if (pid === undefined) await new Promise((r) => setTimeout(r, 20))
  }
  assert.ok(pid, 'the query is running')
  await sql`select pg_terminate_backend(${pid})`.execute(admin.db)

  const failure = await sleeping
  assert.ok(isStorageUnavailable(failure), String(failure))
  // note: the server's goodbye fails the query before the socket closes, so the connection
  // may be handed out once more before pg notices it is gone: a request then gets 503
  // too. The pool drops it then, and the next request gets a fresh connection.
  const patch = () => t.request(owner, 'PATCH', `/v1/status/${created.json().id}`, { value: 'OFF' })
  let after = await patch()
  if (after.statusCode === 503) after = await patch()
  assert.equal(after.statusCode, 200, after.body)
  assert.equal(after.json().changeCount, 2, 'a 503 changed nothing')
})
