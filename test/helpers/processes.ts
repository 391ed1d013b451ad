import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { bounded } from './bounded.ts'
import { defer, type Lifetime } from './cleanup.ts'

// The one helper for real processes: any command (`start`, `runToEnd`) and `statusd serve`
// (`startServer`). Every process lives as long as the test that started it: whatever still
// runs when the test ends is killed, with its process group, and waited for.

/** The repository root: where `npx statusd` and `node bin/statusd.js` are run. */
export const ROOT = path.resolve(import.meta.dirname, '../..')
export const BIN = path.join(ROOT, 'bin', 'statusd.js')

/** Upper bound for any one wait on a child process; a bound, never a timing assertion. */
const WAIT_LIMIT_MS = 60_000

const live = new Set<ChildProcess>()

// last resort when a test process dies before its cleanup ran
process.once('exit', () => {
  for (const child of live) kill(child, 'SIGKILL')
})

function kill(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  try {
    // detached: the child leads its own group, so npx's grandchildren go too
    process.kill(-child.pid, signal)
  } catch {
    child.kill(signal)
  }
}

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** A running child with its output split into lines as it arrives. */
export interface Proc {
  child: ChildProcess
  stdout: string[]
  stderr: string[]
  exited: Promise<Exit>
  /** Resolves with the first output line (stdout or stderr, past or future) matching `test`. */
  waitForLine(test: (line: string) => boolean, what: string): Promise<string>
  /** Sends `signal` to the process itself (not its group) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>
  /** Waits (bounded) for the process to exit by itself. */
  ended(): Promise<Exit>
  /** Everything written so far, for failure messages. */
  output(): string
}

/**
 * Spawns a process with piped output, in `cwd` (the repository root unless given); killed
 * (SIGKILL, its whole group) when `t` ends.
 */
export function start(
  t: Lifetime,
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  cwd: string = ROOT,
): Proc {
  const child = spawn(command, args, {
    cwd,
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  live.add(child)
  const stdout: string[] = []
  const stderr: string[] = []
  const waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = []
  const collect = (stream: NodeJS.ReadableStream, lines: string[]) => {
    let rest = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n')
      rest = parts.pop() ?? ''
      for (const line of parts) {
        lines.push(line)
        for (const w of [...waiters]) {
          if (w.test(line)) {
            waiters.splice(waiters.indexOf(w), 1)
            w.resolve(line)
          }
        }
      }
    })
    stream.on('end', () => {
      if (rest) lines.push(rest)
    })
  }
  collect(child.stdout as NodeJS.ReadableStream, stdout)
  collect(child.stderr as NodeJS.ReadableStream, stderr)
  // 'close', not 'exit': by then every line of output has been collected
  const exited = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => {
      live.delete(child)
      resolve({ code, signal })
    })
  })
  const output = () => `--- stdout\n${stdout.join('\n')}\n--- stderr\n${stderr.join('\n')}`
  defer(t, async () => {
    kill(child, 'SIGKILL')
    await bounded('the process to exit after SIGKILL', exited, WAIT_LIMIT_MS, output)
  })

  const proc: Proc = {
    child,
    stdout,
    stderr,
    exited,
    output,
    waitForLine(test, what) {
      const seen = [...stdout, ...stderr].find(test)
      if (seen !== undefined) return Promise.resolve(seen)
      return bounded(
        what,
        new Promise<string>((resolve, reject) => {
          waiters.push({ test, resolve })
          exited.then(() => {
            // the line may have come with the last chunk, just before the exit
            const late = [...stdout, ...stderr].find(test)
            if (late !== undefined) resolve(late)
            else reject(new Error(`process exited before ${what}\n${output()}`))
          })
        }),
        WAIT_LIMIT_MS,
        output,
      )
    },
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return bounded(`exit after ${signal}`, exited, WAIT_LIMIT_MS, output)
    },
    ended: () => bounded('the process to exit', exited, WAIT_LIMIT_MS, output),
  }
  return proc
}

/** Runs a command to its end (bounded) and returns its exit and output. */
export async function runToEnd(
  t: Lifetime,
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  cwd: string = ROOT,
  limitMs: number = WAIT_LIMIT_MS,
): Promise<Exit & { stdout: string; stderr: string }> {
  const proc = start(t, command, args, env, cwd)
  const exit = await bounded(
    `${command} ${args.join(' ')} to finish`,
    proc.exited,
    limitMs,
    proc.output,
  )
  return { ...exit, stdout: proc.stdout.join('\n'), stderr: proc.stderr.join('\n') }
}

/** The environment for a statusd child: this process's, minus statusd's own settings. */
export function statusdEnv(vars: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of ['DATABASE_URL', 'PORT', 'HOST', 'PUBLIC_URL', 'LOG_LEVEL', 'PLANS_FILE'])
    delete env[name]
  return { ...env, ...vars }
}

// ---- statusd serve ----

export type LogLine = Record<string, unknown>

/** A parsed response body; each use in a test is checked by an assertion. */
// biome-ignore lint/suspicious/noExplicitAny: test-side JSON, narrowed by the assertions that read it
export type Json = any

/** The line as a JSON log object, or null when it is not one (the first-start banner). */
export function asLogLine(line: string): LogLine | null {
  if (!line.startsWith('{')) return null
  try {
    const value: unknown = JSON.parse(line)
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as LogLine) : null
  } catch {
    return null
  }
}

/** A `statusd serve` child process, listening. */
export interface Server extends Proc {
  /** Base URL from the ready line's `address`, e.g. `http://127.0.0.1:41234`. */
  url: string
  /**
   * The API key of the first-start banner: on a SQLite file that did not exist, waited for
   * at start; otherwise the banner's if it came with the ready line, else null.
   */
  firstKey: string | null
  /** Waits (bounded) for the first-start banner's key; rejects if the process exits first. */
  waitForFirstKey(): Promise<string>
  /** Every JSON log line so far, stdout and stderr. */
  logs(): LogLine[]
  /** True while the process runs. */
  alive(): boolean
}

const BANNER_KEY = /^\s+(sdk_[A-Za-z0-9]{40})\s*$/

/**
 * Starts `node bin/statusd.js serve` with PORT=0 on 127.0.0.1 and waits for its "statusd
 * ready" line. `database` is a DATABASE_URL, or the path of a SQLite file; `vars` add to or
 * override the environment. With `descriptorLimit`, the process starts with that limit on
 * open file descriptors, soft and hard (`prlimit`). The server is killed when `t` ends if it
 * still runs.
 */
export async function startServer(
  t: Lifetime,
  database: string,
  vars: Record<string, string> = {},
  { descriptorLimit }: { descriptorLimit?: number } = {},
): Promise<Server> {
  const isUrl = /^[a-z][a-z0-9+.-]*:/i.test(database)
  // a start on a file that does not exist yet creates the first user and prints the banner
  const bannerDue = !isUrl && !existsSync(database)
  const serve = [process.execPath, BIN, 'serve']
  // note: prlimit runs the command in its own process (exec), so the pid is the server's
  const [command, ...args] =
    descriptorLimit === undefined
      ? serve
      : ['prlimit', `--nofile=${descriptorLimit}:${descriptorLimit}`, '--', ...serve]
  const proc = start(
    t,
    command as string,
    args,
    statusdEnv({
      DATABASE_URL: isUrl ? database : `sqlite:${database}`,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...vars,
    }),
  )
  const ready = await proc.waitForLine(
    (line) => asLogLine(line)?.msg === 'statusd ready',
    'the "statusd ready" log line',
  )
  const address = asLogLine(ready)?.address
  assert.equal(typeof address, 'string', `the ready line names the bound address: ${ready}`)
  const waitForFirstKey = async () =>
    BANNER_KEY.exec(
      await proc.waitForLine((line) => BANNER_KEY.test(line), 'the first-start banner'),
    )?.[1] as string
  // note: the banner is written right after the ready line, but pino writes its lines
  // asynchronously (on libuv's thread pool) and the banner is written at once: either may
  // reach the pipe first, and in separate reads. A banner that is due is waited for.
  const keyLine = bannerDue
    ? await proc.waitForLine((line) => BANNER_KEY.test(line), 'the first-start banner')
    : proc.stdout.find((line) => BANNER_KEY.test(line))
  return {
    ...proc,
    url: address as string,
    firstKey: keyLine ? (BANNER_KEY.exec(keyLine)?.[1] ?? null) : null,
    waitForFirstKey,
    logs: () =>
      [...proc.stdout, ...proc.stderr].map(asLogLine).filter((l): l is LogLine => l !== null),
    alive: () => proc.child.exitCode === null && proc.child.signalCode === null,
  }
}
