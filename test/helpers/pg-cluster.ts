import { execFile } from 'node:child_process'
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Directory of the newest installed PostgreSQL's programs (Debian's layout), or undefined. */
export function pgBinDir(): string | undefined {
  if (process.env.PG_BIN && existsSync(join(process.env.PG_BIN, 'initdb')))
    return process.env.PG_BIN
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a))
  return versions[0] ? join(root, versions[0], 'bin') : undefined
}

const isRoot = process.getuid?.() === 0

async function postgresUser(): Promise<{ uid: number; gid: number } | undefined> {
  try {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim())
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim())
    return { uid, gid }
  } catch {
    return undefined
  }
}

/**
 * Why a test that needs a cluster of its own cannot run here, or false when it can: it
 * needs PostgreSQL's programs (`pg_basebackup` too for a standby), and as root the
 * unprivileged `postgres` user to run them as.
 */
export async function clusterUnavailable(
  options: { standby?: boolean } = {},
): Promise<string | false> {
  const bin = pgBinDir()
  if (!bin)
    return 'needs PostgreSQL installed (initdb, pg_ctl under /usr/lib/postgresql/*/bin, or PG_BIN)'
  if (options.standby && !existsSync(join(bin, 'pg_basebackup')))
    return `a standby needs pg_basebackup next to initdb (in ${bin})`
  if (isRoot && !(await postgresUser()))
    return 'running as root needs a "postgres" user to run the PostgreSQL server as'
  return false
}

/** A free loopback TCP port (free when asked; bind it soon). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

/** A throw-away PostgreSQL server a test can stop and start. */
export interface Cluster {
  port: number
  /** URL of its `postgres` database, as superuser `postgres` (trust auth, loopback only). */
  url: string
  /** `fast` (default) ends sessions cleanly; `immediate` is a crash, as when a machine dies. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>
  start(): Promise<void>
  /** Stops the server and deletes its files. */
  destroy(): Promise<void>
}

/** A standby: `promote` makes it a primary (`pg_ctl promote`, waiting until it takes writes). */
export interface Standby extends Cluster {
  promote(): Promise<void>
}

type PgRun = (program: string, args: string[]) => Promise<unknown>

/** A temp dir owned by the user the server runs as, and a runner of PostgreSQL's programs. */
async function clusterDir(): Promise<{ dir: string; pgRun: PgRun }> {
  const bin = pgBinDir()
  if (!bin) throw new Error('PostgreSQL is not installed')
  const dir = mkdtempSync(join(tmpdir(), 'statusd-pg-'))
  const owner = isRoot ? await postgresUser() : undefined
  if (owner) chownSync(dir, owner.uid, owner.gid)
  const pgRun: PgRun = (program, args) =>
    owner
      ? run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args], { cwd: dir })
      : run(join(bin, program), args, { cwd: dir })
  return { dir, pgRun }
}

/**
 * pg_ctl start/stop of the data directory `data` in `dir`, on `port`; `settings` are appended
 * to its postgresql.conf (later lines win), so values need no shell quoting.
 */
async function serveCluster(
  dir: string,
  data: string,
  pgRun: PgRun,
  settings: Record<string, string>,
): Promise<Cluster> {
  const port = await freePort()
  const lines = Object.entries(settings).map(([name, value]) => `${name} = '${value}'\n`)
  if (lines.length > 0) appendFileSync(join(data, 'postgresql.conf'), lines.join(''))
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`
  const start = async () => {
    await pgRun('pg_ctl', [
      '-D',
      data,
      '-l',
      join(dir, 'server.log'),
      '-o',
      options,
      '-w',
      '-t',
      '30',
      'start',
    ])
  }
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await pgRun('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop'])
  }
  await start()
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async destroy() {
      await pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * initdb + pg_ctl start in a temp dir, on a free loopback port (as `postgres` when root);
 * `settings` go into its postgresql.conf.
 */
export async function startCluster(settings: Record<string, string> = {}): Promise<Cluster> {
  const { dir, pgRun } = await clusterDir()
  const data = join(dir, 'data')
  await pgRun('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ])
  return serveCluster(dir, data, pgRun, settings)
}

/**
 * A streaming standby of `primary` (pg_basebackup -R: its connection settings and
 * standby.signal), started on a port of its own, hot (it answers reads). `settings` go into
 * its postgresql.conf after the primary's, which the base backup copied.
 */
export async function startStandby(
  primary: Cluster,
  settings: Record<string, string> = {},
): Promise<Standby> {
  const { dir, pgRun } = await clusterDir()
  const data = join(dir, 'data')
  await pgRun('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    data,
    '-R',
    '-X',
    'stream',
    '--checkpoint=fast',
    '--no-sync',
  ])
  const cluster = await serveCluster(dir, data, pgRun, settings)
  return {
    ...cluster,
    async promote() {
      await pgRun('pg_ctl', ['-D', data, '-w', '-t', '30', 'promote'])
    },
  }
}
