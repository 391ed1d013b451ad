// Timed changes bench: how late values that end are written when many end in the same
// second, and what that costs the writes beside them (docs/performance.md#values-that-end).
// Prints the figures and writes the run to bench/results/.
//   node bench/timed.ts [--statuses 10000] [--writers 8] [--duration 5] [--database-url URL] [--no-write]
//
// Method. A dataset of `--statuses` statuses (bench/seed.ts; SQLite, or PostgreSQL with
// `--database-url`) and `--writers` more; statusd runs as its own process (`statusd serve`).
// `--writers` loops PATCH a value of a status of their own (not one that ends), one request
// at a time each, for `--duration` seconds: the writes alone. Then every one of the
// `--statuses` statuses is given the same end, `valueUntil` a few seconds ahead (written in
// the database in one statement, as the API would store it), and the writers run again for
// as long, from just before that second. Lateness is each history entry the end wrote
// (`via = 'schedule'`) minus the end's time; the writers' req/s and latencies are those of
// each window.
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
/** How far ahead of the writers' second window the ends fall due. */
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

const dir = mkdtempSync(join(tmpdir(), 'statusd-bench-timed-'))
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

  // every end at the same moment, LEAD_MS after the writers' second window opens
  const dueMs = Date.now() + 2_000 + LEAD_MS
  const due = new Date(dueMs).toISOString()
  for (let i = 0; i < endingIds.length; i += 1000)
    await database.db
      .updateTable('statuses')
      .set({ value_until: due, value_after: 'OFF', value_until_by: data.userId })
      .where('id', 'in', endingIds.slice(i, i + 1000))
      .execute()
  await new Promise((resolve) => setTimeout(resolve, dueMs - LEAD_MS - Date.now()))
  const during: number[] = []
  await write(performance.now() + durationS * 1000, during)

  // the ends not written by the window's end are waited for (a minute at most)
  const writtenEnds = () =>
    database.db.selectFrom('status_history').select('at').where('via', '=', 'schedule').execute()
  let written = await writtenEnds()
  for (const deadline = Date.now() + 60_000; written.length < ending && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    written = await writtenEnds()
  }
  if (written.length !== ending) {
    console.error(`bench: ${written.length} of ${ending} ends written`)
    errors += 1
  }
  const lateness = stats(written.map((r) => Date.parse(r.at) - dueMs))
  const rate = (samples: number[]) => Math.round(samples.length / durationS)

  const result: TimedResult = {
    ...runInfo(
      ROOT,
      `npm run bench:timed -- --statuses ${ending} --writers ${writers} --duration ${durationS}${databaseUrlArg ? ' --database-url <postgres>' : ''}`,
      `statusd serve (${engine}); ${ending} statuses given the same end (valueUntil) in one statement; lateness is each written history entry (via schedule) minus that time. ${writers} loops PATCH statuses of their own, one request at a time each, for durationS without ends, then for as long from ${LEAD_MS} ms before the ends fall due`,
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
