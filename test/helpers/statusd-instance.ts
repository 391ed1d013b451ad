import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

const BIN = fileURLToPath(new URL('../../bin/statusd.js', import.meta.url))

// note: the banner may come before or after the "listening" line, so it is read lazily
const firstKey = (out: string) => /^\s+(sdk_[A-Za-z0-9]{40})\s*$/m.exec(out)?.[1]

/** A real `statusd serve` process on a free loopback port. */
export interface ServerProcess {
  url: string
  process: ChildProcess
  /** The first user's API key from the first-start banner, once printed; else undefined. */
  firstKey(): string | undefined
  /** Waits up to `timeoutMs` for the banner's key; undefined when none is printed. */
  waitForFirstKey(timeoutMs?: number): Promise<string | undefined>
  /** Everything it printed so far (stdout and stderr). */
  output(): string
  /** True while the process runs. */
  alive(): boolean
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>
}

/** Starts `node bin/statusd.js serve` with `env` on top of this process's environment. */
export async function startServer(
  env: Record<string, string>,
  options: { timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (chunk) => {
    out += chunk
  })
  child.stderr.on('data', (chunk) => {
    out += chunk
  })
  const exited = once(child, 'exit')
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`statusd did not start in time; it printed:\n${out}`))
    }, options.timeoutMs ?? 30_000)
    const check = () => {
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m?.[1]) {
        clearTimeout(timer)
        child.stdout.off('data', check)
        resolve(m[1])
      }
    }
    child.stdout.on('data', check)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`statusd exited with ${code} before listening; it printed:\n${out}`))
    })
  })
  return {
    url,
    process: child,
    firstKey: () => firstKey(out),
    async waitForFirstKey(timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs
      while (!firstKey(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
      return firstKey(out)
    },
    output: () => out,
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const [code] = (await exited) as [number | null]
      return code
    },
  }
}
