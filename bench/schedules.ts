// Schedules bench: how late schedule fires are written when many statuses' schedules fire in
// the same second, and what that costs the writes beside them (bench/timed.ts, for
// schedules: docs/api.md#schedules). Prints the figures and writes the run to bench/results/.
//   node bench/schedules.ts [--statuses 10000] [--writers 8] [--duration 5] [--database-url URL] [--no-write]
//
// Method. A dataset of `--statuses` statuses (bench/seed.ts; SQLite, or PostgreSQL with
// `--database-url`) and `--writers` more; statusd runs as its own process (`statusd serve`).
// `--writers` loops PATCH a value of a status of their own (not one that is scheduled), one request
// at a time each, for `--duration` seconds: the writes alone. Then every one of the
// `--statuses` statuses is given the same schedule, one entry firing at the first whole
// minute a few seconds ahead (written in the database, as the API would store it), and the
// writers run again for as long, from just before that minute. Lateness is each history
// entry a fire wrote (`via = 'schedule'`) minus the fire's time; the writers' req/s and
// latencies are those of each window.
//
// note: the client shares the machine with the server; on 2 cores the figures are upper
// bounds.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { createDatabase } from '../src/db/create-database.ts'
import { runInfo, type TimedResult, writeResult } from './results.ts'
import { startServer, statusdCommand, stopServer } from './rig.ts'
import { seed } from './seed.ts'

const ROOT = new URL('..', import.meta.url).pathname
const { values } = parseArgs({
  options: {
    statuses: { type: 'string', default: '10000' },
    writers: { type: 'string', default: '8' },
    duration: { type: 'string', default: '5' },
    'database-url': { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
})
const ending = Number(values.statuses)
const writers = Number(values.writers)
const durationS = Number(values.duration)
const databaseUrlArg = values['database-url']
/** How long before the fires fall due the writers' second window opens. */
const LEAD_MS = 500

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number)
const round = (ms: number) => Math.round(ms * 100) / 100
const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    p50Ms: round(quantile(sorted, 0.5)),
    p99Ms: round(quantile(sorted, 0.99)),
    maxMs: round(sorted.at(-1) ?? Number.NaN),
    count: sorted.length,
  }
}

const dir = mkdtempSync(join(tmpdir(), 'statusd-bench-schedules-'))
const data = await seed({
  dir,
  statuses: ending + writers,
  history: 1,
  ...(databaseUrlArg !== undefined && { databaseUrl: databaseUrlArg }),
})
const ids = readFileSync(data.idsFile, 'utf8').trim().split('\n')
const endingIds = ids.slice(0, ending)
const writerIds = ids.slice(ending, ending + writers)
const engine = data.databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres'
const port = 20_000 + Math.floor(Math.random() * 20_000)
const server = await startServer('statusd', port, statusdCommand(port, data.databaseUrl))
const database = createDatabase(data.databaseUrl, { poolSize: 2 })
const base = `http://127.0.0.1:${port}`
const keyed = { 'service-api-key': data.key, 'content-type': 'application/json' }
let errors = 0

/** `writers` loops PATCHing their own status until `until`; latencies in `samples`. */
const write = (until: number, samples: number[]) =>
  Promise.all(
    writerIds.map(async (id) => {
      let n = 0
      while (performance.now() < until) {
        const start = performance.now()
        const res = await fetch(`${base}/v1/status/${id}`, {
          method: 'PATCH',
          headers: keyed,
          body: JSON.stringify({ value: `v${n++}` }),
        })
        await res.arrayBuffer()
        samples.push(performance.now() - start)
        if (res.status !== 200) errors += 1
      }
    }),
  )

try {
  // warm-up: the routes' schemas compile on first use
  await write(performance.now() + 1_000, [])

  const alone: number[] = []
  await write(performance.now() + durationS * 1000, alone)

  // every fire at the same minute, the first whole one a few seconds ahead; the writers'
  // second window opens LEAD_MS before it
  const dueMs = Math.ceil((Date.now() + 5_000) / 60_000) * 60_000
  const due = new Date(dueMs)
  const now = new Date().toISOString()
  const entries = JSON.stringify([
    {
      cron: `${due.getUTCMinutes()} ${due.getUTCHours()} ${due.getUTCDate()} ${due.getUTCMonth() + 1} *`,
      value: 'OFF',
    },
  ])
  for (let i = 0; i < endingIds.length; i += 1000)
    await database.db
      .insertInto('status_schedules')
      .values(
        endingIds.slice(i, i + 1000).map((id) => ({
          status_id: id,
          set_by: data.userId,
          timezone: 'UTC',
          entries,
          next_fire_at: due.toISOString(),
          created_at: now,
          updated_at: now,
        })),
      )
      .execute()
  await new Promise((resolve) => setTimeout(resolve, dueMs - LEAD_MS - Date.now()))
  const during: number[] = []
  await write(performance.now() + durationS * 1000, during)

  const written = await database.db
    .selectFrom('status_history')
    .select('at')
    .where('via', '=', 'schedule')
    .execute()
  if (written.length !== ending) {
    console.error(`bench: ${written.length} of ${ending} fires written in the window`)
    errors += 1
  }
  const lateness = stats(written.map((r) => Date.parse(r.at) - dueMs))
  const rate = (samples: number[]) => Math.round(samples.length / durationS)

  const result: TimedResult = {
    ...runInfo(
      ROOT,
      `npm run bench:schedules -- --statuses ${ending} --writers ${writers} --duration ${durationS}${databaseUrlArg ? ' --database-url <postgres>' : ''}`,
      `statusd serve (${engine}); ${ending} statuses given the same schedule, firing at one minute; lateness is each written history entry (via schedule) minus that time. ${writers} loops PATCH statuses of their own, one request at a time each, for durationS without fires, then for as long from ${LEAD_MS} ms before the fires fall due`,
    ),
    kind: 'timed',
    params: { engine, statuses: ending, writers, durationS },
    lateness,
    patch: {
      alone: { reqPerS: rate(alone), ...stats(alone) },
      during: { reqPerS: rate(during), ...stats(during) },
    },
    errors,
  }
  console.log(JSON.stringify(result, null, 2))
  if (errors > 0) console.error(`bench: ${errors} errors: not a result`)
  else if (!values['no-write']) writeResult(result)
} finally {
  await database.close()
  await stopServer(server)
  rmSync(dir, { recursive: true, force: true })
}
