import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { BIN, type Proc, start, statusdEnv } from './processes.ts'

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
  /** The API key of the first-start banner, or null when no banner was printed. */
  firstKey: string | null
  /** Every JSON log line so far, stdout and stderr. */
  logs(): LogLine[]
}

const BANNER_KEY = /^\s+(sdk_[A-Za-z0-9]{40})\s*$/

/**
 * Starts `node bin/statusd.js serve` on a SQLite file with PORT=0 on 127.0.0.1 and waits for
 * its "statusd ready" line; `vars` add to or override the environment.
 */
export async function startServer(dbFile: string, vars: Record<string, string> = {}) {
  // a start on a file that does not exist yet creates the first user and prints the banner
  const bannerDue = vars.DATABASE_URL === undefined && !existsSync(dbFile)
  const proc = start(
    process.execPath,
    [BIN, 'serve'],
    statusdEnv({
      DATABASE_URL: `sqlite:${dbFile}`,
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
  // note: the banner is written right after the ready line, but pino writes its lines
  // asynchronously (on libuv's thread pool) and the banner is written at once: either may
  // reach the pipe first, and in separate reads. A banner that is due is waited for.
  const keyLine = bannerDue
    ? await proc.waitForLine((line) => BANNER_KEY.test(line), 'the first-start banner')
    : proc.stdout.find((line) => BANNER_KEY.test(line))
  const server: Server = {
    ...proc,
    url: address as string,
    firstKey: keyLine ? (BANNER_KEY.exec(keyLine)?.[1] ?? null) : null,
    logs: () =>
      [...proc.stdout, ...proc.stderr].map(asLogLine).filter((l): l is LogLine => l !== null),
  }
  return server
}
