// statusd on PostgreSQL straight and through PgBouncer in transaction pooling, alternated on
// the same database (docs/postgres.md#behind-pgbouncer): PATCH value by id with wrk -t1 -c32,
// throughput, latency and statusd's CPU per request. Through the pooler statusd runs as that
// page says: DATABASE_LISTEN_URL straight to PostgreSQL.
// Start PostgreSQL (fsync on) and PgBouncer yourself, the pooler's database pointing at the
// same (empty) database as BENCH_DATABASE_URL:
//   BENCH_DATABASE_URL=postgres://…:5432/db BENCH_POOLER_URL=postgres://…:6432/db \
//     npm run bench:pooler -- [--rounds 3] [--duration 8] [--statuses 10000] [--no-write]
// Prints a table, and writes the run to bench/results/ unless --no-write.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { type Result, runInfo, writeResult } from './results.ts'
import {
  assertWrkInstalled,
  cpuMicros,
  median,
  ROOT,
  runWrk,
  startServer,
  statusdCommand,
  stopServer,
  takePort,
} from './rig.ts'
import { seed } from './seed.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '32' },
    statuses: { type: 'string', default: '10000' },
    'no-write': { type: 'boolean', default: false },
  },
})
const direct = process.env.BENCH_DATABASE_URL
const pooled = process.env.BENCH_POOLER_URL
if (!direct || !pooled)
  throw new Error('set BENCH_DATABASE_URL (PostgreSQL) and BENCH_POOLER_URL (PgBouncer to it)')

const targets: { name: string; env: Record<string, string> & { DATABASE_URL: string } }[] = [
  { name: 'direct', env: { DATABASE_URL: direct } },
  {
    name: 'pgbouncer',
    env: { DATABASE_URL: pooled, DATABASE_LISTEN_URL: direct },
  },
]

interface Sample {
  rps: number
  p50ms: number
  p99ms: number
  cpuUsPerRequest: number
  non2xx: number
}

async function main() {
  assertWrkInstalled()
  const dir = mkdtempSync(join(tmpdir(), 'statusd-bench-pooler-'))
  try {
    const data = await seed({
      dir,
      statuses: Number(values.statuses),
      history: 1,
      databaseUrl: direct as string,
    })
    const samples = new Map<string, Sample[]>()
    for (let round = 1; round <= Number(values.rounds); round++) {
      // ABBA: each target runs first in every other round, so neither always follows the other
      for (const target of round % 2 ? targets : [...targets].reverse()) {
        const port = takePort()
        const command = statusdCommand(port, target.env.DATABASE_URL)
        const child = await startServer(target.name, port, {
          args: command.args,
          env: { ...command.env, ...target.env },
        })
        const wrk = {
          port,
          connections: Number(values.connections),
          mode: 'patch' as const,
          key: data.key,
          targets: data.idsFile,
        }
        try {
          runWrk({ ...wrk, seconds: 2 }) // warm-up
          const cpuBefore = cpuMicros(child.pid as number)
          const r = runWrk({ ...wrk, seconds: Number(values.duration) })
          const sample = {
            rps: r.rps,
            p50ms: r.p50ms,
            p99ms: r.p99ms,
            cpuUsPerRequest: (cpuMicros(child.pid as number) - cpuBefore) / Math.max(1, r.requests),
            non2xx: r.non2xx,
          }
          samples.set(target.name, [...(samples.get(target.name) ?? []), sample])
          console.error(
            `pooler: round ${round} ${target.name}: ${sample.rps.toFixed(0)} req/s, p50 ${sample.p50ms.toFixed(2)} ms, p99 ${sample.p99ms.toFixed(2)} ms, CPU ${sample.cpuUsPerRequest.toFixed(0)} µs/req${sample.non2xx ? `, ${sample.non2xx} non-2xx!` : ''}`,
          )
        } finally {
          await stopServer(child)
        }
      }
    }
    const summary = Object.fromEntries(
      [...samples].map(([name, list]) => [
        name,
        {
          rps: median(list.map((s) => s.rps)),
          p50ms: median(list.map((s) => s.p50ms)),
          p99ms: median(list.map((s) => s.p99ms)),
          cpuUsPerRequest: median(list.map((s) => s.cpuUsPerRequest)),
          non2xx: list.reduce((n, s) => n + s.non2xx, 0),
          samples: list,
        },
      ]),
    )
    console.log(JSON.stringify(summary, null, 2))
    const ratio = (summary.pgbouncer?.rps ?? 0) / (summary.direct?.rps ?? 1)
    console.log(`through PgBouncer / direct: ${ratio.toFixed(2)} × the PATCH throughput`)
    if (!values['no-write'])
      // note: a kind of result of its own, which nothing but this script reads
      writeResult({
        ...runInfo(
          ROOT,
          `npm run bench:pooler -- --rounds ${values.rounds} --duration ${values.duration} --statuses ${values.statuses}`,
          'PATCH value by id, wrk -t1 -c32, statusd straight to PostgreSQL (fsync on) and through PgBouncer (transaction pooling, DATABASE_LISTEN_URL direct), alternated',
        ),
        kind: 'pooler',
        ratio,
        targets: summary,
      } as unknown as Result)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
