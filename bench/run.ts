// The benchmark rig (`npm run bench`): seeds a dataset, then in interleaved rounds drives
// statusd (PATCH by id, POST by key) and three peers kept in bench/peers/ with wrk, 32
// connections, and prints the medians: req/s, p50, p99, peak RSS, CPU per request and the
// ratios to raw node:http, the naive peer and the lean one. Also measures cold start to
// /readyz. The run is written to bench/results/ (bench/results.ts) and the chart of
// docs/performance.md redrawn from all results (bench/chart.ts), unless --no-write.
// BENCH_DATABASE_URL=postgres://… adds statusd on PostgreSQL and the lean PostgreSQL peer
// (lean-pg), which write to that database. The public reads (badge, share-json, share-page;
// with -304 the revalidation of each) GET the anonymous views of a few public statuses
// (bench/read-targets.ts).
//   node bench/run.ts [--rounds 3] [--duration 10] [--connections 32] [--statuses 10000]
//                     [--only raw,naive,lean,statusd-patch,statusd-post,lean-pg,statusd-patch-pg,statusd-post-pg,
//                             badge,share-json,share-page,badge-304,share-json-304,share-page-304]
//                     [--no-write]
//   --only cold-start measures the cold start alone (no wrk target, wrk need not be installed).
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { CHART_FILE, renderChart } from './chart.ts'
import { publicReadTargets, READ_STATUSES, READ_TARGETS, type ReadTarget } from './read-targets.ts'
import { type RigResult, type RigTarget, readResults, runInfo, writeResult } from './results.ts'
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
  type WrkMode,
} from './rig.ts'
import { seed } from './seed.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    statuses: { type: 'string', default: '10000' },
    history: { type: 'string', default: '1' },
    only: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
})
const ROUNDS = Number(values.rounds)
const DURATION = Number(values.duration)
const CONNECTIONS = Number(values.connections)

interface Target {
  name: string
  label: string
  /** Command and env to start the server on `port` with its own copy of the dataset. */
  start(port: number, dbFile: string): { args: string[]; env: Record<string, string> }
  mode: WrkMode
  /** The engine it writes to; null for the raw peer, which stores nothing. */
  engine: 'sqlite' | 'postgres' | null
  /** A read target: what to make public and GET once the server is up. */
  read?: ReadTarget
}

const statusd = (mode: 'patch' | 'post', databaseUrl?: string): Target => ({
  name: `statusd-${mode}${databaseUrl ? '-pg' : ''}`,
  label: `statusd ${mode === 'patch' ? 'PATCH by id' : 'POST by key'}${databaseUrl ? ' (PostgreSQL)' : ' (SQLite, durable)'}`,
  mode,
  engine: databaseUrl ? 'postgres' : 'sqlite',
  start: (port, dbFile) => statusdCommand(port, databaseUrl ?? `sqlite:${dbFile}`),
})

/**
 * A peer in bench/peers/, PATCH by id on its own copy of the dataset (raw ignores it), or
 * with `databaseUrl` on that PostgreSQL database (the dataset statusd on PostgreSQL writes).
 */
const peer = (name: string, label: string, script: string, databaseUrl?: string): Target => ({
  name,
  label,
  mode: 'patch',
  engine: name === 'raw' ? null : databaseUrl ? 'postgres' : 'sqlite',
  start: (port, dbFile) => ({
    args: [join(ROOT, 'bench/peers', script)],
    env: { PORT: String(port), DATABASE_URL: databaseUrl ?? `sqlite:${dbFile}` },
  }),
})

const targets: Target[] = (
  [
    peer('raw', 'raw node:http, constant JSON (ceiling)', 'raw-http.ts'),
    peer('naive', 'naive Express 5 + better-sqlite3', 'naive-express.ts'),
    peer(
      'lean',
      'lean Fastify + better-sqlite3, group commit + fdatasync (the floor of the write)',
      'lean-fastify.ts',
    ),
    statusd('patch'),
    statusd('post'),
    ...(process.env.BENCH_DATABASE_URL
      ? [
          peer(
            'lean-pg',
            'lean Fastify + pg, one prepared statement per write (the floor on PostgreSQL)',
            'lean-pg.ts',
            process.env.BENCH_DATABASE_URL,
          ),
          statusd('patch', process.env.BENCH_DATABASE_URL),
          statusd('post', process.env.BENCH_DATABASE_URL),
        ]
      : []),
    ...READ_TARGETS.map(
      (read): Target => ({
        name: read.name,
        label: read.label,
        mode: 'public',
        engine: 'sqlite',
        read,
        start: (port, dbFile) => {
          const command = statusdCommand(port, `sqlite:${dbFile}`)
          // note: wrk's one address would meet the anonymous limit (1 200 a minute) in a
          // blink; the limit's check still runs on every request, as in production
          return { ...command, env: { ...command.env, ANON_REQUESTS_PER_MINUTE: '1000000000' } }
        },
      }),
    ),
  ] satisfies Target[]
).filter((t) => (values.only ? values.only.split(',').includes(t.name) : !t.read?.revalidate))

interface Sample {
  rps: number
  p50ms: number
  p99ms: number
  rssMb: number
  /** The server's CPU time (all its threads) per answered request, in µs. */
  cpuUsPerRequest: number
  /** The size of the SQLite write-ahead log at the end of the run, in MB (WAL targets only). */
  walMb?: number
  non2xx: number
  socketErrors: number
}

async function measureColdStart(
  seedFile: string,
  dir: string,
  runs = 5,
): Promise<{ ms: number; cpuMs: number }> {
  const times: number[] = []
  const cpu: number[] = []
  for (let i = 0; i < runs; i++) {
    const dbFile = join(dir, `cold-${i}.db`)
    copyFileSync(seedFile, dbFile)
    const port = takePort()
    const started = performance.now()
    const { args, env } = statusdCommand(port, `sqlite:${dbFile}`)
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    })
    for (;;) {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null)
      if (res?.status === 200) break
      if (performance.now() - started > 15_000)
        throw new Error('cold start: /readyz never answered')
      await new Promise((r) => setTimeout(r, 2))
    }
    times.push(performance.now() - started)
    cpu.push(cpuMicros(child.pid as number) / 1000)
    await stopServer(child)
  }
  return { ms: median(times), cpuMs: median(cpu) }
}

async function main() {
  if (targets.length > 0) assertWrkInstalled()
  const dir = mkdtempSync(join(tmpdir(), 'statusd-bench-'))
  try {
    console.error(`bench: seeding ${values.statuses} statuses in ${dir}`)
    const data = await seed({
      dir,
      statuses: Number(values.statuses),
      history: Number(values.history),
    })
    const seedFile = join(dir, 'seed.db')
    if (process.env.BENCH_DATABASE_URL) {
      console.error('bench: seeding PostgreSQL')
      // note: the target database must be empty; the PostgreSQL rows get their own key
      const pgDir = mkdtempSync(join(tmpdir(), 'statusd-bench-pg-'))
      const pg = await seed({
        dir: pgDir,
        statuses: Number(values.statuses),
        history: Number(values.history),
        databaseUrl: process.env.BENCH_DATABASE_URL,
      })
      Object.assign(pgData, pg)
    }
    const samples = new Map<string, Sample[]>()
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        const dbFile = join(dir, `${target.name}-${round}.db`)
        copyFileSync(seedFile, dbFile)
        const port = takePort()
        const child = await startServer(target.name, port, target.start(port, dbFile))
        const d = target.engine === 'postgres' ? pgData : data
        const wrk = {
          port,
          connections: CONNECTIONS,
          mode: target.mode,
          key: d.key,
          targets: target.read
            ? await publicReadTargets(target.read, port, d, join(dir, `${target.name}.txt`))
            : target.mode === 'post'
              ? d.keysFile
              : d.idsFile,
        }
        try {
          runWrk({ ...wrk, seconds: 2 }) // warm-up: JIT, caches, connection setup
          const cpuBefore = cpuMicros(child.pid as number)
          const r = runWrk({ ...wrk, seconds: DURATION })
          const cpuUsed = cpuMicros(child.pid as number) - cpuBefore
          const sample: Sample = {
            rps: r.rps,
            p50ms: r.p50ms,
            p99ms: r.p99ms,
            rssMb: peakRssMb(child.pid as number),
            cpuUsPerRequest: cpuUsed / Math.max(1, r.requests),
            walMb: existsSync(`${dbFile}-wal`) ? statSync(`${dbFile}-wal`).size / 1e6 : undefined,
            non2xx: r.non2xx,
            socketErrors: r.socketErrors,
          }
          samples.set(target.name, [...(samples.get(target.name) ?? []), sample])
          console.error(
            `bench: round ${round} ${target.name}: ${sample.rps.toFixed(0)} req/s, p50 ${sample.p50ms.toFixed(2)} ms, p99 ${sample.p99ms.toFixed(2)} ms, peak RSS ${sample.rssMb.toFixed(0)} MB, CPU ${sample.cpuUsPerRequest.toFixed(0)} µs/req${sample.non2xx ? `, ${sample.non2xx} non-2xx!` : ''}`,
          )
        } finally {
          await stopServer(child)
          rmSync(dbFile, { force: true })
          rmSync(`${dbFile}-wal`, { force: true })
          rmSync(`${dbFile}-shm`, { force: true })
        }
      }
    }
    report(samples, await measureColdStart(seedFile, dir))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const pgData = {} as Awaited<ReturnType<typeof seed>>

const round = (n: number, digits = 0) => Number(n.toFixed(digits))

function report(samples: Map<string, Sample[]>, coldStart: { ms: number; cpuMs: number }) {
  const rpsOf = (name: string) => {
    const s = samples.get(name)
    return s ? median(s.map((x) => x.rps)) : null
  }
  const peers = {
    raw: rpsOf('raw'),
    naive: rpsOf('naive'),
    lean: rpsOf('lean'),
    leanPg: rpsOf('lean-pg'),
    statusdSqlite: rpsOf('statusd-patch'),
  }
  const ratio = (rps: number, peer: number | null) => (peer ? round(rps / peer, 2) : null)
  const results: RigTarget[] = targets
    .filter((t) => samples.has(t.name))
    .map((t) => {
      const s = samples.get(t.name) as Sample[]
      const rps = median(s.map((x) => x.rps))
      const wal = s.flatMap((x) => (x.walMb === undefined ? [] : [x.walMb]))
      return {
        name: t.name,
        label: t.label,
        engine: t.engine,
        reqPerS: round(rps),
        ratio: {
          raw: ratio(rps, peers.raw),
          naive: ratio(rps, peers.naive),
          lean: ratio(rps, peers.lean),
          ...(t.engine === 'postgres' && {
            leanPg: ratio(rps, peers.leanPg),
            statusdSqlite: ratio(rps, peers.statusdSqlite),
          }),
        },
        p50Ms: round(median(s.map((x) => x.p50ms)), 2),
        p99Ms: round(median(s.map((x) => x.p99ms)), 2),
        peakRssMb: round(Math.max(...s.map((x) => x.rssMb))),
        cpuUsPerRequest: round(median(s.map((x) => x.cpuUsPerRequest))),
        walMb: wal.length ? round(Math.max(...wal)) : null,
        errors: s.reduce((n, x) => n + x.non2xx + x.socketErrors, 0),
      }
    })
  const command = `npm run bench -- --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS} --statuses ${values.statuses}`
  const result: RigResult = {
    ...runInfo(
      ROOT,
      command,
      `wrk -t1 -c${CONNECTIONS} -d${DURATION}s, {"value":"80%"} rotating over ${values.statuses} statuses of one key (reads: GET rotating over the views of ${READ_STATUSES} public statuses, no key; -304 with If-None-Match); medians of ${ROUNDS} interleaved rounds (peak RSS: the highest; CPU: the server process's user + system time, all threads, per answered request; log: the largest SQLite -wal file at the end of a run).`,
    ),
    kind: 'rig',
    params: {
      rounds: ROUNDS,
      durationS: DURATION,
      connections: CONNECTIONS,
      statuses: Number(values.statuses),
    },
    targets: results,
    coldStartMs: round(coldStart.ms),
    coldStartCpuMs: round(coldStart.cpuMs),
    coldStartRuns: 5,
  }
  const cell = (v: number | null, unit = '') => (v === null ? '–' : `${v}${unit}`)
  const table = [
    `${command}`,
    '',
    '| target | req/s | × raw | × naive | × lean | p50 | p99 | peak RSS | CPU per request | log | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (t) =>
        `| ${t.label} | ${t.reqPerS} | ${cell(t.ratio.raw)} | ${cell(t.ratio.naive)} | ${cell(t.ratio.lean)} | ${cell(t.p50Ms, ' ms')} | ${cell(t.p99Ms, ' ms')} | ${cell(t.peakRssMb, ' MB')} | ${cell(t.cpuUsPerRequest, ' µs')} | ${cell(t.walMb, ' MB')} | ${t.errors} |`,
    ),
    ...results
      .filter((t) => t.name === 'statusd-patch-pg')
      .map(
        (t) =>
          `\nPostgreSQL PATCH (goal: ≥ 1.0 × lean-pg, ≥ 0.5 × statusd on SQLite): ${cell(t.ratio.leanPg ?? null, ' × lean-pg')}, ${cell(t.ratio.statusdSqlite ?? null, ' × SQLite')}, ${cell(t.cpuUsPerRequest, ' µs')}`,
      ),
    '',
    `Cold start to /readyz 200 (median of 5, ${values.statuses} statuses): ${result.coldStartMs} ms (guard: ≤ 500 ms), ${result.coldStartCpuMs} ms of CPU.`,
  ].join('\n')
  process.stdout.write(`\n${table}\n`)
  if (values['no-write']) return
  writeResult(result)
  writeFileSync(CHART_FILE, renderChart(readResults().map((r) => r.result)))
  console.error(`bench: redrew ${CHART_FILE}`)
}

await main()
