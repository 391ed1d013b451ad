import { execFile } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { defer, type Lifetime } from './cleanup.ts'
import { freePort } from './pg-cluster.ts'
import { start } from './processes.ts'

// Debian's PgBouncer in front of the test server, for docs/postgres.md#behind-pgbouncer.

const run = promisify(execFile)
const isRoot = process.getuid?.() === 0

/** The pgbouncer program: PGBOUNCER_BIN, else where Debian puts it, else on the PATH. */
async function pgbouncerBin(): Promise<string | undefined> {
  for (const candidate of [process.env.PGBOUNCER_BIN, '/usr/sbin/pgbouncer'])
    if (candidate && existsSync(candidate)) return candidate
  try {
    return (await run('sh', ['-c', 'command -v pgbouncer'])).stdout.trim() || undefined
  } catch {
    return undefined
  }
}

/** Why PgBouncer cannot run here, or false when it can. */
export async function pgbouncerUnavailable(): Promise<string | false> {
  if (!(await pgbouncerBin()))
    return 'needs PgBouncer installed (Debian: apt-get install pgbouncer; or PGBOUNCER_BIN)'
  if (isRoot) {
    try {
      await run('id', ['-u', 'postgres'])
    } catch {
      return 'PgBouncer refuses to run as root: needs a "postgres" user to run it as'
    }
  }
  return false
}

export interface PgBouncer {
  /** A URL through the pooler to the target database and schema (user and password: any). */
  url: string
  /** `pgbouncer --version`'s first line. */
  version: string
}

/**
 * Starts PgBouncer in `pool_mode` (transaction pooling unless told) on a free loopback port,
 * with one database, `statusd`, pointing at `target`: a test database URL whose
 * `search_path` (libpq's `options`, which PgBouncer does not pass on) is set on every server
 * connection by `connect_query` instead. Stopped, and its files removed, when `t` ends.
 */
export async function startPgBouncer(
  t: Lifetime,
  target: string,
  { poolMode = 'transaction', poolSize = 4 }: { poolMode?: string; poolSize?: number } = {},
): Promise<PgBouncer> {
  const bin = await pgbouncerBin()
  if (!bin) throw new Error('PgBouncer is not installed')
  const url = new URL(target)
  const searchPath = /-c search_path=(\S+)/.exec(url.searchParams.get('options') ?? '')?.[1]
  const dbname = decodeURIComponent(url.pathname.slice(1))
  const user = decodeURIComponent(url.username) || 'postgres'
  const password = decodeURIComponent(url.password)
  // note: auth_type any: PgBouncer lets every client in and logs in to the server as the
  // user this entry names; loopback only, for a test server with trust authentication
  const entry = [
    `host=${url.hostname}`,
    `port=${url.port || '5432'}`,
    `dbname=${dbname}`,
    `user=${user}`,
    ...(password ? [`password=${password}`] : []),
    ...(searchPath ? [`connect_query='set search_path = ${searchPath}'`] : []),
  ].join(' ')
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'statusd-pgbouncer-'))
  const ini = join(dir, 'pgbouncer.ini')
  writeFileSync(
    ini,
    [
      '[databases]',
      `statusd = ${entry}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      `pool_mode = ${poolMode}`,
      // few server connections for many clients: statements of one client connection
      // land on different server sessions, as they do under load
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 500',
      '',
    ].join('\n'),
  )
  // PgBouncer refuses to run as root: as root, it switches to `postgres` (-u) after start
  if (isRoot) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim())
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim())
    chownSync(dir, uid, gid)
    chownSync(ini, uid, gid)
  }
  defer(t, () => rmSync(dir, { recursive: true, force: true }))
  const proc = start(t, bin, [...(isRoot ? ['-u', 'postgres'] : []), ini], {
    PATH: process.env.PATH,
  })
  await proc.waitForLine((line) => / process up: /.test(line), 'PgBouncer to be up')
  const version = (await run(bin, ['--version'])).stdout.split('\n')[0] ?? ''
  return { url: `postgres://statusd@127.0.0.1:${port}/statusd`, version }
}
