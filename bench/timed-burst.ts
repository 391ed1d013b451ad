// The run both timed-change benches share (bench/timed.ts, bench/schedules.ts): a seeded
// dataset served by `statusd serve`, writers PATCHing statuses of their own for `--duration`
// seconds alone, then as long again while many timed changes fall due at one moment; the
// lateness of each change written (`via = 'schedule'`) and the writers' rate and latencies
// in each window. What makes the changes fall due is the caller's (`Burst.makeDue`).
//
// note: the client shares the machine with the server; on 2 cores the figures are upper
// bounds.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import type { Kysely } from 'kysely'
import { createDatabase } from '../src/db/create-database.ts'
import type { DB } from '../src/db/database.ts'
import { runInfo, type TimedResult, writeResult } from './results.ts'
import { startServer, statusdCommand, stopServer } from './rig.ts'
import { seed } from './seed.ts'

/** What one bench makes fall due, and how it names it. */
export interface Burst {
  /** The npm script and temporary folder's name: `timed`, `schedules`. */
  name: string
  /** The changes, plural, for messages: `ends`, `fires`. */
  changes: string
  /** The method, for the result's record. */
  method: (m: { engine: string; statuses: number; writers: number; leadMs: number }) => string
  /**
   * Makes every status of `ids` fall due at one moment, at least `leadMs` and a couple of
   * seconds ahead, as the API would store it; returns that moment (ms since the epoch).
   */
  makeDue: (db: Kysely<DB>, ids: string[], userId: string, leadMs: number) => Promise<number>
  /** How long to wait, after the second window, for changes not yet written. */
  lateWaitMs: number
}

/** How long before the changes fall due the writers' second window opens. */
const LEAD_MS = 500

export async function runBurst(burst: Burst): Promise<void> {
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

  const dir = mkdtempSync(join(tmpdir(), `statusd-bench-${burst.name}-`))
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

    const dueMs = await burst.makeDue(database.db, endingIds, data.userId, LEAD_MS)
    await new Promise((resolve) => setTimeout(resolve, dueMs - LEAD_MS - Date.now()))
    const during: number[] = []
    await write(performance.now() + durationS * 1000, during)

    // the changes not written by the window's end are waited for (lateWaitMs at most)
    const writtenChanges = () =>
      database.db.selectFrom('status_history').select('at').where('via', '=', 'schedule').execute()
    let written = await writtenChanges()
    for (
      const deadline = Date.now() + burst.lateWaitMs;
      written.length < ending && Date.now() < deadline;
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      written = await writtenChanges()
    }
    if (written.length !== ending) {
      console.error(`bench: ${written.length} of ${ending} ${burst.changes} written`)
      errors += 1
    }
    const lateness = stats(written.map((r) => Date.parse(r.at) - dueMs))
    const rate = (samples: number[]) => Math.round(samples.length / durationS)

    const result: TimedResult = {
      ...runInfo(
        ROOT,
        `npm run bench:${burst.name} -- --statuses ${ending} --writers ${writers} --duration ${durationS}${databaseUrlArg ? ' --database-url <postgres>' : ''}`,
        burst.method({ engine, statuses: ending, writers, leadMs: LEAD_MS }),
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
}
