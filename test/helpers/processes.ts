import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'

/** The repository root: where `npx statusd` and `node bin/statusd.js` are run. */
export const ROOT = path.resolve(import.meta.dirname, '../..')
export const BIN = path.join(ROOT, 'bin', 'statusd.js')

/** Upper bound for any one wait on a child process; a bound, never a timing assertion. */
const WAIT_LIMIT_MS = 60_000

const live = new Set<ChildProcess>()

/** SIGKILLs every child (and its process group) still running. Call from `after`. */
export function killAll(): void {
  for (const child of live) kill(child, 'SIGKILL')
}
// last resort when a test file dies before its `after` ran
process.once('exit', killAll)

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

/** Spawns a process with piped output, tracked so `killAll` ends it even when a test fails. */
export function start(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
): Proc {
  const child = spawn(command, args, {
    cwd: ROOT,
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
        new Promise<string>((resolve, reject) => {
          waiters.push({ test, resolve })
          exited.then(() => {
            // the line may have come with the last chunk, just before the exit
            const late = [...stdout, ...stderr].find(test)
            if (late !== undefined) resolve(late)
            else reject(new Error(`process exited before ${what}\n${output()}`))
          })
        }),
        what,
        output,
      )
    },
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return bounded(exited, `exit after ${signal}`, output)
    },
    ended: () => bounded(exited, 'the process to exit', output),
  }
  return proc
}

/** Runs a command to its end (bounded) and returns its exit and output. */
export async function runToEnd(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<Exit & { stdout: string; stderr: string }> {
  const proc = start(command, args, env)
  const exit = await bounded(proc.exited, `${command} ${args.join(' ')} to finish`, proc.output)
  return { ...exit, stdout: proc.stdout.join('\n'), stderr: proc.stderr.join('\n') }
}

/** Rejects (and kills nothing itself: `killAll` does) when `promise` takes past the limit. */
function bounded<T>(promise: Promise<T>, what: string, output: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`gave up waiting for ${what} after ${WAIT_LIMIT_MS} ms\n${output()}`)),
      WAIT_LIMIT_MS,
    )
  })
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}

/** The environment for a statusd child: this process's, minus statusd's own settings. */
export function statusdEnv(vars: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of ['DATABASE_URL', 'PORT', 'HOST', 'PUBLIC_URL', 'LOG_LEVEL', 'PLANS_FILE'])
    delete env[name]
  return { ...env, ...vars }
}
