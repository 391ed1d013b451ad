import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import Fastify from 'fastify'
import { sqliteFileGauges } from '../../src/db/sqlite/open-sqlite.ts'
import { metricsPlugin } from '../../src/plugins/metrics.ts'
import { defer, tempDir } from '../helpers/cleanup.ts'

// The SQLite file gauges of /metrics (operations.md, "Health probes and metrics") on the
// plugin alone: a scrape reports what it can and never fails for a file.

test('/metrics file gauges: a missing log is 0 bytes, an unreadable path NaN, the scrape 200', async (t) => {
  const dir = tempDir(t, 'statusd-metrics-unit-')
  const database = join(dir, 'statusd.db')
  writeFileSync(database, Buffer.alloc(4096))
  const app = Fastify()
  defer(t, () => app.close())
  const ok = Fastify()
  defer(t, () => ok.close())
  // the log as SQLite leaves it after a clean close: no file; the database under a path
  // that stat refuses with another error than ENOENT (a name too long)
  await app.register(metricsPlugin, {
    gauges: sqliteFileGauges({ database: join(dir, 'x'.repeat(300)), log: `${database}-wal` }),
  })
  const res = await app.inject({ method: 'GET', url: '/metrics' })
  assert.equal(res.statusCode, 200)
  assert.match(res.body, /^statusd_sqlite_wal_bytes 0$/m)
  // prom-client writes `Nan`; Prometheus reads NaN in any case
  assert.match(res.body, /^statusd_sqlite_database_bytes nan$/im)
  await ok.register(metricsPlugin, {
    gauges: sqliteFileGauges({ database, log: `${database}-wal` }),
  })
  assert.match(
    (await ok.inject({ method: 'GET', url: '/metrics' })).body,
    /^statusd_sqlite_database_bytes 4096$/m,
  )
})
