// The benchmark rig (`npm run bench`): seeds a dataset, then in interleaved rounds drives
// statusd (PATCH by id, POST by key) and two peers kept in bench/peers/ with wrk, 32
// connections, and prints + appends to docs/performance.md the medians: req/s, p50, p99,
// peak RSS and the ratio to raw node:http, with the machine and date. Also measures cold
// start to /readyz. BENCH_DATABASE_URL=postgres://… adds statusd on PostgreSQL.
//   node bench/run.ts [--rounds 3] [--duration 10] [--connections 32] [--statuses 10000]
//                     [--only raw,naive,statusd-patch,statusd-post] [--no-write]
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
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
const ROOT = new URL('..', import.meta.url).pathname
const WRK_SCRIPT = join(ROOT, 'bench/wrk/statusd.lua')
const PLANS_FILE = join(ROOT, 'bench/plans.json')

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
  start: (port, dbFile) => ({
    args: [join(ROOT, 'bin/statusd.js'), 'serve'],
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl ?? `sqlite:${dbFile}`,
      PLANS_FILE,
      LOG_LEVEL: 'warn',
    },
  }),
})

const targets: Target[] = (
  [
    {
      name: 'raw',
      label: 'raw node:http, constant JSON (ceiling)',
      mode: 'patch',
      engine: 'sqlite',
      start: (port) => ({
        args: [join(ROOT, 'bench/peers/raw-http.ts')],
        env: { PORT: String(port) },
      }),
    },
    {
      name: 'naive',
      label: 'naive Express 5 + better-sqlite3',
      mode: 'patch',
      engine: 'sqlite',
      start: (port, dbFile) => ({
        args: [join(ROOT, 'bench/peers/naive-express.ts')],
        env: { PORT: String(port), DATABASE_URL: `sqlite:${dbFile}` },
      }),
    },
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
  non2xx: number
  socketErrors: number
}

let nextPort = 18500 + Math.floor(Math.random() * 500)

function startServer(
  target: Target,
  dbFile: string,
): Promise<{ child: ChildProcess; port: number }> {
  const port = nextPort++
  const { args, env } = target.start(port, dbFile)
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${target.name} did not start`)), 15_000)
    let output = ''
    const check = () => {
      fetch(`http://127.0.0.1:${port}/healthz`).then(
        () => {
          clearTimeout(timer)
          resolve({ child, port })
        },
        () => setTimeout(check, 20),
      )
    }
    child.stdout?.on('data', (d) => (output += d))
    child.stderr?.on('data', (d) => (output += d))
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${target.name} exited with ${code}: ${output.slice(-2000)}`))
    })
    check()
  })
}

function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.removeAllListeners('exit')
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    child.on('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

/** Peak resident set size of a process (VmHWM), in MB. */
function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return kb / 1024
}

function runWrk(port: number, target: Target, key: string, idsFile: string, seconds: number) {
  const out = execFileSync(
    'wrk',
    [
      '-t1',
      `-c${CONNECTIONS}`,
      `-d${seconds}s`,
      '--latency',
      '-s',
      WRK_SCRIPT,
      `http://127.0.0.1:${port}`,
    ],
    {
      env: { ...process.env, BENCH_MODE: target.mode, BENCH_KEY: key, BENCH_IDS: idsFile },
      encoding: 'utf8',
      timeout: (seconds + 30) * 1000,
    },
  )
  const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
  if (!line) throw new Error(`wrk printed no result:\n${out}`)
  return JSON.parse(line.slice('BENCH_RESULT '.length)) as {
    requests: number
    duration_us: number
    socket_errors: number
    non2xx: number
    p50_us: number
    p99_us: number
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2
}

async function measureColdStart(seedFile: string, dir: string, runs = 5): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const dbFile = join(dir, `cold-${i}.db`)
    copyFileSync(seedFile, dbFile)
    const port = nextPort++
    const started = performance.now()
    const child = spawn(process.execPath, [join(ROOT, 'bin/statusd.js'), 'serve'], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${dbFile}`,
        PLANS_FILE,
        LOG_LEVEL: 'warn',
      },
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
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' })
  } catch (err) {
    // wrk --version exits 1 but runs; a missing binary throws ENOENT
    if ((err as { code?: string }).code === 'ENOENT') {
      console.error('bench: wrk is not installed (Debian: apt-get install -y wrk)')
      process.exit(2)
    }
  }
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
        const { child, port } = await startServer(target, dbFile)
        const d = target.engine === 'postgres' ? pgData : data
        const ids = target.mode === 'post' ? d.keysFile : d.idsFile
        try {
          runWrk(port, target, d.key, ids, 2) // warm-up: JIT, caches, connection setup
          const r = runWrk(port, target, d.key, ids, DURATION)
          const sample: Sample = {
            rps: r.requests / (r.duration_us / 1e6),
            p50ms: r.p50_us / 1000,
            p99ms: r.p99_us / 1000,
            rssMb: peakRssMb(child.pid as number),
            non2xx: r.non2xx,
            socketErrors: r.socket_errors,
          }
          samples.set(target.name, [...(samples.get(target.name) ?? []), sample])
          console.error(
            `bench: round ${round} ${target.name}: ${sample.rps.toFixed(0)} req/s, p50 ${sample.p50ms.toFixed(2)} ms, p99 ${sample.p99ms.toFixed(2)} ms, peak RSS ${sample.rssMb.toFixed(0)} MB${sample.non2xx ? `, ${sample.non2xx} non-2xx!` : ''}`,
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

function report(samples: Map<string, Sample[]>, coldStartMs: number) {
  const raw = samples.get('raw')
  const rawRps = raw ? median(raw.map((s) => s.rps)) : null
  const naive = samples.get('naive')
  const naiveRps = naive ? median(naive.map((s) => s.rps)) : null
  const rows = targets
    .filter((t) => samples.has(t.name))
    .map((t) => {
      const s = samples.get(t.name) as Sample[]
      const rps = median(s.map((x) => x.rps))
      const bad = s.reduce((n, x) => n + x.non2xx + x.socketErrors, 0)
      return `| ${t.label} | ${rps.toFixed(0)} | ${rawRps ? (rps / rawRps).toFixed(2) : '–'} | ${naiveRps ? (rps / naiveRps).toFixed(1) : '–'} | ${median(s.map((x) => x.p50ms)).toFixed(2)} ms | ${median(s.map((x) => x.p99ms)).toFixed(2)} ms | ${Math.max(...s.map((x) => x.rssMb)).toFixed(0)} MB | ${bad} |`
    })
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  const machine = `${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`
  const section = [
    `### ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC — ${machine}`,
    '',
    `\`npm run bench -- --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS} --statuses ${values.statuses}\`: wrk -t1 -c${CONNECTIONS} -d${DURATION}s, \`{"value":"80%"}\` rotating over ${values.statuses} statuses of one key; medians of ${ROUNDS} interleaved rounds (peak RSS: the highest).`,
    '',
    '| target | req/s | × raw | × naive | p50 | p99 | peak RSS | errors |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Cold start to \`/readyz\` 200 (median of 5, ${values.statuses} statuses): ${coldStartMs.toFixed(0)} ms.`,
    '',
  ].join('\n')
  process.stdout.write(`\n${section}\n`)
  if (!values['no-write']) {
    const file = join(ROOT, 'docs/performance.md')
    appendFileSync(file, `\n${section}`)
    console.error(`bench: appended to ${file}`)
  }
}

await main()
