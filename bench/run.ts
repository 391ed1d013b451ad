// The benchmark rig (`npm run bench`): seeds a dataset, then in interleaved rounds drives
// statusd (PATCH by id, POST by key) and three peers kept in bench/peers/ with wrk, 32
// connections, and prints + appends to docs/performance.md the medians: req/s, p50, p99,
// peak RSS and the ratios to raw node:http, the naive peer and the lean one, with the
// machine and date. Also measures cold start to /readyz. BENCH_DATABASE_URL=postgres://…
// adds statusd on PostgreSQL.
//   node bench/run.ts [--rounds 3] [--duration 10] [--connections 32] [--statuses 10000]
//                     [--only raw,naive,lean,statusd-patch,statusd-post] [--no-write]
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  appendToPerformance,
  assertWrkInstalled,
  cpuMicros,
  median,
  peakRssMb,
  ROOT,
  resultHeading,
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
  mode: 'patch' | 'post'
  engine: 'sqlite' | 'postgres'
}

const statusd = (mode: 'patch' | 'post', databaseUrl?: string): Target => ({
  name: `statusd-${mode}${databaseUrl ? '-pg' : ''}`,
  label: `statusd ${mode === 'patch' ? 'PATCH by id' : 'POST by key'}${databaseUrl ? ' (PostgreSQL)' : ' (SQLite, durable)'}`,
  mode,
  engine: databaseUrl ? 'postgres' : 'sqlite',
  start: (port, dbFile) => statusdCommand(port, databaseUrl ?? `sqlite:${dbFile}`),
})

/** A peer in bench/peers/, PATCH by id on its own copy of the dataset (raw ignores it). */
const peer = (name: string, label: string, script: string): Target => ({
  name,
  label,
  mode: 'patch',
  engine: 'sqlite',
  start: (port, dbFile) => ({
    args: [join(ROOT, 'bench/peers', script)],
    env: { PORT: String(port), DATABASE_URL: `sqlite:${dbFile}` },
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
          statusd('patch', process.env.BENCH_DATABASE_URL),
          statusd('post', process.env.BENCH_DATABASE_URL),
        ]
      : []),
  ] satisfies Target[]
).filter((t) => !values.only || values.only.split(',').includes(t.name))

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

async function measureColdStart(seedFile: string, dir: string, runs = 5): Promise<number> {
  const times: number[] = []
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
    await stopServer(child)
  }
  return median(times)
}

async function main() {
  assertWrkInstalled()
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
          targets: target.mode === 'post' ? d.keysFile : d.idsFile,
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
    const coldStartMs = await measureColdStart(seedFile, dir)
    report(samples, coldStartMs)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const pgData = {} as Awaited<ReturnType<typeof seed>>

/**
 * The goals of issue 5 this run measures, for statusd's PATCH by id on SQLite: each with
 * the run's figure and whether it is met. Empty when that target did not run.
 */
function goalLines(
  patch: Sample[] | undefined,
  ratios: { raw: number | null; naive: number | null },
  coldStartMs: number,
): string[] {
  if (!patch) return []
  const rps = median(patch.map((x) => x.rps))
  const p99 = median(patch.map((x) => x.p99ms))
  const rss = Math.max(...patch.map((x) => x.rssMb))
  const line = (goal: string, figure: string, met: boolean | null) =>
    `- ${goal}: ${figure} (${met === null ? 'not measured' : met ? 'met' : 'not met'})`
  return [
    'Goals (statusd PATCH by id, SQLite):',
    '',
    line(
      'PATCH ≥ 0.5 × raw node:http',
      ratios.raw ? `${(rps / ratios.raw).toFixed(2)} ×` : 'raw did not run',
      ratios.raw ? rps / ratios.raw >= 0.5 : null,
    ),
    line(
      'PATCH ≥ 6 × the naive peer',
      ratios.naive ? `${(rps / ratios.naive).toFixed(1)} ×` : 'naive did not run',
      ratios.naive ? rps / ratios.naive >= 6 : null,
    ),
    line(
      'p99 ≤ 5 ms at 32 connections',
      `${p99.toFixed(2)} ms`,
      CONNECTIONS === 32 ? p99 <= 5 : null,
    ),
    line('peak RSS ≤ 150 MB', `${rss.toFixed(0)} MB`, rss <= 150),
    line('cold start to /readyz ≤ 300 ms', `${coldStartMs.toFixed(0)} ms`, coldStartMs <= 300),
    '',
  ]
}

function report(samples: Map<string, Sample[]>, coldStartMs: number) {
  const raw = samples.get('raw')
  const rawRps = raw ? median(raw.map((s) => s.rps)) : null
  const naive = samples.get('naive')
  const naiveRps = naive ? median(naive.map((s) => s.rps)) : null
  const lean = samples.get('lean')
  const leanRps = lean ? median(lean.map((s) => s.rps)) : null
  const rows = targets
    .filter((t) => samples.has(t.name))
    .map((t) => {
      const s = samples.get(t.name) as Sample[]
      const rps = median(s.map((x) => x.rps))
      const bad = s.reduce((n, x) => n + x.non2xx + x.socketErrors, 0)
      const wal = s.flatMap((x) => (x.walMb === undefined ? [] : [x.walMb]))
      const walCell = wal.length ? `${Math.max(...wal).toFixed(0)} MB` : '–'
      return `| ${t.label} | ${rps.toFixed(0)} | ${rawRps ? (rps / rawRps).toFixed(2) : '–'} | ${naiveRps ? (rps / naiveRps).toFixed(1) : '–'} | ${leanRps ? (rps / leanRps).toFixed(2) : '–'} | ${median(s.map((x) => x.p50ms)).toFixed(2)} ms | ${median(s.map((x) => x.p99ms)).toFixed(2)} ms | ${Math.max(...s.map((x) => x.rssMb)).toFixed(0)} MB | ${median(s.map((x) => x.cpuUsPerRequest)).toFixed(0)} µs | ${walCell} | ${bad} |`
    })
  const section = [
    resultHeading(),
    '',
    `\`npm run bench -- --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS} --statuses ${values.statuses}\`: wrk -t1 -c${CONNECTIONS} -d${DURATION}s, \`{"value":"80%"}\` rotating over ${values.statuses} statuses of one key; medians of ${ROUNDS} interleaved rounds (peak RSS: the highest; CPU: the server process's user + system time, all threads, per answered request; log: the largest SQLite \`-wal\` file at the end of a run).`,
    '',
    '| target | req/s | × raw | × naive | × lean | p50 | p99 | peak RSS | CPU per request | log | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Cold start to \`/readyz\` 200 (median of 5, ${values.statuses} statuses): ${coldStartMs.toFixed(0)} ms.`,
    '',
    ...goalLines(samples.get('statusd-patch'), { raw: rawRps, naive: naiveRps }, coldStartMs),
  ].join('\n')
  process.stdout.write(`\n${section}\n`)
  if (!values['no-write']) appendToPerformance(section)
}

await main()
