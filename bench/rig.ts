// What the benchmark scripts share: starting and stopping servers, driving them with wrk
// (bench/wrk/statusd.lua), CPU time, peak RSS and medians. Results are written as data by
// bench/results.ts.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export const ROOT = new URL('..', import.meta.url).pathname
export const WRK_SCRIPT = join(ROOT, 'bench/wrk/statusd.lua')
export const PLANS_FILE = join(ROOT, 'bench/plans.json')

/** Exits with a hint when wrk is missing. */
export function assertWrkInstalled(): void {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' })
  } catch (err) {
    // wrk --version exits 1 but runs; a missing binary throws ENOENT
    if ((err as { code?: string }).code === 'ENOENT') {
      console.error('bench: wrk is not installed (Debian: apt-get install -y wrk)')
      process.exit(2)
    }
  }
}

let nextPort = 18500 + Math.floor(Math.random() * 500)
/** A port for the next server (a fresh one each time, so a slow exit never clashes). */
export const takePort = (): number => nextPort++

/**
 * Node's flags in the checkout's `npm start` (`node <flags> bin/statusd.js serve`), so that
 * a bench runs statusd as users run it (docs/operations.md, memory).
 */
export function startFlags(root = ROOT): string[] {
  const start: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start
  const words = start.trim().split(/\s+/)
  const bin = words.indexOf('bin/statusd.js')
  if (words[0] !== 'node' || bin < 0) throw new Error(`bench: unexpected start script: ${start}`)
  return words.slice(1, bin)
}

/**
 * How to start `statusd serve` as users run it, on a port and a database; `root` is the
 * checkout to run (another one in bench/versus.ts), with its own `npm start` flags.
 */
export function statusdCommand(
  port: number,
  databaseUrl: string,
  root = ROOT,
): { args: string[]; env: Record<string, string> } {
  return {
    args: [...startFlags(root), join(root, 'bin/statusd.js'), 'serve'],
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      PLANS_FILE,
      LOG_LEVEL: 'warn',
    },
  }
}

/** Starts a server process and resolves once `/healthz` answers on its port. */
export function startServer(
  name: string,
  port: number,
  command: { args: string[]; env: Record<string, string> },
  timeoutMs = 15_000,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, command.args, {
    env: { ...process.env, ...command.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), timeoutMs)
    let output = ''
    const check = () => {
      fetch(`http://127.0.0.1:${port}/healthz`).then(
        () => {
          clearTimeout(timer)
          resolve(child)
        },
        () => setTimeout(check, 20),
      )
    }
    child.stdout?.on('data', (d) => (output += d))
    child.stderr?.on('data', (d) => (output += d))
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited with ${code}: ${output.slice(-2000)}`))
    })
    check()
  })
}

/** SIGTERM, then SIGKILL after 10 s; resolves when the process is gone. */
export function stopServer(child: ChildProcess): Promise<void> {
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

/** Clock ticks per second of /proc's CPU times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

/**
 * CPU time (user + system) a process has used so far, in microseconds: all its threads, or
 * with `thread` one of them (the process's own id is its main thread, the event loop's).
 */
export function cpuMicros(pid: number, thread?: number): number {
  const stat = readFileSync(
    thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`,
    'utf8',
  )
  // note: after the command name in parentheses (which may hold spaces) the third field
  // follows; utime and stime are the 14th and 15th
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6
}

/** Peak resident set size of a process (VmHWM), in MB. */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return kb / 1024
}

/**
 * What bench/wrk/statusd.lua sends: PATCH by id, POST by key, GET of listed paths (with the
 * key), or `public`: GET of listed paths without a key, each line `path[<TAB>If-None-Match]`.
 */
export type WrkMode = 'patch' | 'post' | 'get' | 'public'

export interface WrkRun {
  rps: number
  p50ms: number
  p99ms: number
  requests: number
  non2xx: number
  socketErrors: number
}

/**
 * One wrk run (`-t1`) against a local server. `targets` is a file of ids (patch), keys
 * (post) or request paths (get), one a line.
 */
export function runWrk(options: {
  port: number
  connections: number
  seconds: number
  mode: WrkMode
  key: string
  targets: string
}): WrkRun {
  const { port, connections, seconds } = options
  const out = execFileSync(
    'wrk',
    [
      '-t1',
      `-c${connections}`,
      `-d${seconds}s`,
      '--latency',
      '-s',
      WRK_SCRIPT,
      `http://127.0.0.1:${port}`,
    ],
    {
      env: {
        ...process.env,
        BENCH_MODE: options.mode,
        BENCH_KEY: options.key,
        BENCH_IDS: options.targets,
      },
      encoding: 'utf8',
      timeout: (seconds + 30) * 1000,
      maxBuffer: 16 * 1024 * 1024,
    },
  )
  const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '))
  if (!line) throw new Error(`wrk printed no result:\n${out}`)
  const r = JSON.parse(line.slice('BENCH_RESULT '.length)) as {
    requests: number
    duration_us: number
    socket_errors: number
    non2xx: number
    p50_us: number
    p99_us: number
  }
  return {
    rps: r.requests / (r.duration_us / 1e6),
    p50ms: r.p50_us / 1000,
    p99ms: r.p99_us / 1000,
    requests: r.requests,
    non2xx: r.non2xx,
    socketErrors: r.socket_errors,
  }
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2
}
