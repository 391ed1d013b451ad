// Two builds of statusd, alternated on the same dataset: this checkout and another one
// (`--against DIR`, e.g. a `git worktree add` of an older commit, its node_modules installed
// or linked). A change that moves a figure by less than the host's noise between runs
// minutes apart shows here, where each pair runs seconds apart. Per run: a fresh copy of the
// dataset, `statusd serve` as users run it (each build's own `npm start` flags), a 2 s
// warm-up, PATCH value by id with wrk -t1 -c32 (throughput, CPU per request, latency), the
// SQLite log's size at the end of that run, then wrk -t1 -c1 (latency one at a time).
//   node bench/versus.ts --against ../statusd-before [--statuses 10000] [--history 1]
//                        [--distribution uniform|zipf] [--rounds 2] [--duration 20]
//                        [--dir /tmp/statusd-versus] [--no-write]
// Prints a table, and writes the run to bench/results/ unless --no-write.

import { copyFileSync, existsSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { checkout, runInfo, type VersusResult, writeResult } from './results.ts'
import {
  assertWrkInstalled,
  cpuMicros,
  median,
  peakRssMb,
  ROOT,
  runWrk,
  startServer,
  statusdCommand,
  stopServer,
  takePort,
} from './rig.ts'
import { type Distribution, seedOrReuse } from './seed.ts'

const { values } = parseArgs({
  options: {
    against: { type: 'string' },
    statuses: { type: 'string', default: '10000' },
    history: { type: 'string', default: '1' },
    distribution: { type: 'string', default: 'uniform' },
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string', default: '20' },
    connections: { type: 'string', default: '32' },
    dir: { type: 'string', default: '/tmp/statusd-versus' },
    'no-write': { type: 'boolean', default: false },
  },
})
if (!values.against) {
  console.error('versus: --against DIR (another checkout of statusd) is required')
  process.exit(2)
}
const AGAINST = resolve(values.against)
if (!existsSync(join(AGAINST, 'bin/statusd.js'))) {
  console.error(`versus: ${AGAINST} is not a checkout of statusd (no bin/statusd.js)`)
  process.exit(2)
}
const STATUSES = Number(values.statuses)
const HISTORY = Number(values.history)
const ROUNDS = Number(values.rounds)
const DURATION = Number(values.duration)
const CONNECTIONS = Number(values.connections)

interface Run {
  rps: number
  cpuUs: number
  p50ms: number
  p99ms: number
  p99OneMs: number
  logMb: number
  rssMb: number
  errors: number
}

/** The dataset in --dir, seeded unless one of the same shape is already there. */
async function dataset(): Promise<{ key: string; idsFile: string; seedFile: string }> {
  const data = await seedOrReuse(
    {
      dir: values.dir,
      statuses: STATUSES,
      history: HISTORY,
      distribution: values.distribution as Distribution,
    },
    'versus',
  )
  return { key: data.key, idsFile: data.idsFile, seedFile: join(values.dir, 'seed.db') }
}

async function runOnce(
  root: string,
  data: { key: string; idsFile: string; seedFile: string },
): Promise<Run> {
  const dbFile = join(values.dir, 'run.db')
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbFile}${suffix}`, { force: true })
  copyFileSync(data.seedFile, dbFile)
  const port = takePort()
  const child = await startServer(root, port, statusdCommand(port, `sqlite:${dbFile}`, root))
  const wrk = { port, mode: 'patch' as const, key: data.key, targets: data.idsFile }
  try {
    runWrk({ ...wrk, connections: CONNECTIONS, seconds: 2 })
    const before = cpuMicros(child.pid as number)
    const loaded = runWrk({ ...wrk, connections: CONNECTIONS, seconds: DURATION })
    const cpu = cpuMicros(child.pid as number) - before
    const logMb = existsSync(`${dbFile}-wal`) ? statSync(`${dbFile}-wal`).size / 1e6 : 0
    const one = runWrk({ ...wrk, connections: 1, seconds: Math.max(5, DURATION / 2) })
    return {
      rps: loaded.rps,
      cpuUs: cpu / Math.max(1, loaded.requests),
      p50ms: loaded.p50ms,
      p99ms: loaded.p99ms,
      p99OneMs: one.p99ms,
      logMb,
      rssMb: peakRssMb(child.pid as number),
      errors: loaded.non2xx + loaded.socketErrors + one.non2xx + one.socketErrors,
    }
  } finally {
    await stopServer(child)
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbFile}${suffix}`, { force: true })
  }
}

async function main() {
  assertWrkInstalled()
  const data = await dataset()
  const builds = [
    { name: `this checkout (${ROOT})`, root: ROOT },
    { name: `against (${AGAINST})`, root: AGAINST },
  ]
  const runs = new Map<string, Run[]>(builds.map((b) => [b.name, []]))
  for (let round = 1; round <= ROUNDS; round++) {
    // note: the order alternates too, so neither build always runs on a warmer machine
    const order = round % 2 === 1 ? builds.slice().reverse() : builds
    for (const build of order) {
      const run = await runOnce(build.root, data)
      runs.get(build.name)?.push(run)
      console.error(
        `versus: round ${round} ${build.name}: ${run.rps.toFixed(0)} req/s, CPU ${run.cpuUs.toFixed(0)} µs/request, p50 ${run.p50ms.toFixed(2)} ms, p99 ${run.p99ms.toFixed(2)} ms, one client p99 ${run.p99OneMs.toFixed(2)} ms, log ${run.logMb.toFixed(0)} MB${run.errors ? `, ${run.errors} errors!` : ''}`,
      )
    }
  }
  const each = (rs: Run[], pick: (r: Run) => number, digits: number) =>
    rs.map((r) => pick(r).toFixed(digits)).join(' / ')
  const rows = builds.map((b) => {
    const rs = runs.get(b.name) as Run[]
    return `| ${b.name} | ${each(rs, (r) => r.rps, 0)} (median ${median(rs.map((r) => r.rps)).toFixed(0)}) | ${each(rs, (r) => r.cpuUs, 0)} µs | ${each(rs, (r) => r.p50ms, 2)} ms | ${each(rs, (r) => r.p99ms, 1)} ms | ${each(rs, (r) => r.p99OneMs, 1)} ms | ${each(rs, (r) => r.logMb, 0)} MB | ${Math.max(...rs.map((r) => r.rssMb)).toFixed(0)} MB | ${rs.reduce((n, r) => n + r.errors, 0)} |`
  })
  const command = `npm run bench:versus -- --against … --statuses ${STATUSES} --history ${HISTORY} --distribution ${values.distribution} --rounds ${ROUNDS} --duration ${DURATION}`
  const round = (n: number, digits = 0) => Number(n.toFixed(digits))
  const result: VersusResult = {
    ...runInfo(
      ROOT,
      command,
      `two builds alternated on fresh copies of one dataset; PATCH {"value":"80%"} by id with wrk -t1 -c${CONNECTIONS} for ${DURATION} s after a 2 s warm-up, then -c1; each round's figure in order (CPU: the server's, all threads, per answered request; log: the SQLite -wal file after the ${CONNECTIONS}-connection run).`,
    ),
    kind: 'versus',
    engine: 'sqlite',
    params: {
      statuses: STATUSES,
      history: HISTORY,
      distribution: values.distribution,
      rounds: ROUNDS,
      durationS: DURATION,
      connections: CONNECTIONS,
    },
    builds: builds.map((b, i) => {
      const rs = runs.get(b.name) as Run[]
      return {
        build: i === 0 ? 'this checkout' : 'against',
        commit: checkout(b.root).commit,
        rounds: rs.map((r) => ({
          reqPerS: round(r.rps),
          cpuUsPerRequest: round(r.cpuUs),
          p50Ms: round(r.p50ms, 2),
          p99Ms: round(r.p99ms, 1),
          oneClientP99Ms: round(r.p99OneMs, 1),
          walMb: round(r.logMb),
        })),
        peakRssMb: round(Math.max(...rs.map((r) => r.rssMb))),
        errors: rs.reduce((n, r) => n + r.errors, 0),
      }
    }),
  }
  const section = [
    command,
    '',
    `| build | req/s (${CONNECTIONS} conn.) | CPU per request | p50 | p99 | p99 (1 conn.) | log | peak RSS | errors |`,
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n')
  process.stdout.write(`\n${section}\n`)
  if (!values['no-write']) writeResult(result)
}

await main()
