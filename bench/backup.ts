// Backup bench: how long `statusd backup` and `statusd restore` take and how large a backup
// is, at each dataset size, and whether a backup holds up the writes beside it
// (docs/performance.md#backups). Prints the figures and writes the run to bench/results/.
//   node bench/backup.ts [--sizes 10000,1000000] [--history 1] [--duration 10]
//                        [--dir /tmp/statusd-backup-bench] [--server-url postgres://…/postgres]
//                        [--no-write]
//
// Method. For each size, a dataset seeded by bench/seed.ts (N statuses, N × history history
// rows; reused from --dir when it has that shape), served by `statusd serve` as its own
// process (SQLite, or PostgreSQL with --server-url). One keyed PATCH of a status runs alone,
// one at a time, for --duration seconds, and its latencies are kept; then again for as long
// while `statusd backup` runs (as its own process) one backup after another. The backups'
// times are the CLI's own (the JSON it prints); their size is the tar's. Then the last
// backup is restored with `statusd restore` (its own process) into an empty database.
//
// note: the client, the server and the backup share the machine; on 2 cores the figures are
// upper bounds.
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs, promisify } from 'node:util'
import { type BackupResult, runInfo, writeResult } from './results.ts'
import { startFlags, startServer, statusdCommand, stopServer } from './rig.ts'
import { createDatabaseOn, databaseOn, dropDatabase, seedOrReuse } from './seed.ts'

const ROOT = new URL('..', import.meta.url).pathname
const run = promisify(execFile)
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,1000000' },
    history: { type: 'string', default: '1' },
    duration: { type: 'string', default: '10' },
    dir: { type: 'string', default: join(tmpdir(), 'statusd-backup-bench') },
    'server-url': { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
})
const sizes = values.sizes.split(',').map(Number)
const history = Number(values.history)
const durationS = Number(values.duration)
const serverUrl = values['server-url']
const engine = serverUrl ? 'postgres' : 'sqlite'

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number)
const round = (ms: number) => Math.round(ms * 100) / 100
const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    p50Ms: round(quantile(sorted, 0.5)),
    p99Ms: round(quantile(sorted, 0.99)),
    maxMs: round(sorted.at(-1) ?? Number.NaN),
    count: sorted.length,
  }
}
const median = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  )

/** `statusd …` as its own process on `databaseUrl`; its JSON output. */
async function statusd(databaseUrl: string, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(
    process.execPath,
    [...startFlags(), join(ROOT, 'bin/statusd.js'), ...args, '--json'],
    { env: { ...process.env, DATABASE_URL: databaseUrl }, maxBuffer: 16 * 1024 * 1024 },
  )
  return JSON.parse(stdout)
}

let errors = 0
const rows: BackupResult['rows'] = []
for (const n of sizes) {
  const dir = join(values.dir, `${engine}-n${n}-h${history}`)
  mkdirSync(dir, { recursive: true })
  const seedName = `statusd_bench_backup_${n}`
  const data = await seedOrReuse(
    {
      dir,
      statuses: n,
      history,
      ...(serverUrl && { databaseUrl: databaseOn(serverUrl, seedName), serverUrl }),
    },
    'backup',
  )
  // the server writes: SQLite on a copy of the seed, PostgreSQL on the seed itself
  let databaseUrl = data.databaseUrl
  if (!serverUrl) {
    copyFileSync(join(dir, 'seed.db'), join(dir, 'work.db'))
    rmSync(join(dir, 'work.db-wal'), { force: true })
    databaseUrl = `sqlite:${join(dir, 'work.db')}`
  }
  const backups = join(dir, 'backups')
  rmSync(backups, { recursive: true, force: true })
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const server = await startServer('statusd', port, statusdCommand(port, databaseUrl))
  const base = `http://127.0.0.1:${port}`
  try {
    const keyed = { 'service-api-key': data.key, 'content-type': 'application/json' }
    const created = await fetch(`${base}/v1/status-keys/backup-bench`, {
      method: 'POST',
      headers: keyed,
      body: JSON.stringify({ value: 'start' }),
    })
    if (created.status !== 201 && created.status !== 200)
      throw new Error(`creating the status answered ${created.status}: ${await created.text()}`)
    const { id } = (await created.json()) as { id: string }
    let w = 0
    const patchLoop = async (until: () => boolean, samples: number[]) => {
      while (!until()) {
        const start = performance.now()
        const res = await fetch(`${base}/v1/status/${id}`, {
          method: 'PATCH',
          headers: keyed,
          body: JSON.stringify({ value: `v${w++}` }),
        })
        await res.arrayBuffer()
        samples.push(performance.now() - start)
        if (res.status !== 200) errors += 1
      }
    }
    const after = (s: number) => {
      const end = performance.now() + s * 1000
      return () => performance.now() >= end
    }
    await patchLoop(after(1), [])
    const alone: number[] = []
    await patchLoop(after(durationS), alone)

    // backups one after another, for at least --duration seconds, with the writes beside them
    const during: number[] = []
    const taken: { seconds: number; bytes: number; path: string }[] = []
    let backingUp = true
    const writes = patchLoop(() => !backingUp, during)
    const enough = after(durationS)
    do {
      const out = await statusd(databaseUrl, 'backup', '--to', backups)
      taken.push({
        seconds: out.seconds as number,
        bytes: out.bytes as number,
        path: out.path as string,
      })
      // only the newest is kept: the folder would fill the disk at 1 M statuses
      for (const old of taken.slice(0, -1)) rmSync(old.path, { force: true })
    } while (!enough())
    backingUp = false
    await writes

    // restore the last backup into an empty database
    const last = taken.at(-1) as (typeof taken)[number]
    let target: string
    if (serverUrl) {
      const name = `statusd_bench_restore_${n}`
      await dropDatabase(serverUrl, name)
      await createDatabaseOn(serverUrl, name)
      target = databaseOn(serverUrl, name)
    } else {
      for (const f of ['restored.db', 'restored.db-wal', 'restored.db-shm'])
        rmSync(join(dir, f), { force: true })
      target = `sqlite:${join(dir, 'restored.db')}`
    }
    const restored = await statusd(target, 'restore', last.path)
    const databaseBytes = serverUrl
      ? null
      : statSync(join(dir, 'work.db')).size +
        (statSync(join(dir, 'work.db-wal'), { throwIfNoEntry: false })?.size ?? 0)
    rows.push({
      statuses: n,
      historyRows: data.historyRows,
      databaseBytes,
      backups: taken.length,
      backupSeconds: round(median(taken.map((b) => b.seconds))),
      backupBytes: last.bytes,
      restoreSeconds: restored.seconds as number,
      patch: { alone: stats(alone), during: stats(during) },
    })
    console.error(`backup: ${n} statuses done`, JSON.stringify(rows.at(-1)))
    rmSync(backups, { recursive: true, force: true })
  } finally {
    await stopServer(server)
  }
}

const result: BackupResult = {
  ...runInfo(
    ROOT,
    `npm run bench:backup -- --sizes ${values.sizes} --history ${history} --duration ${durationS}${serverUrl ? ' --server-url …' : ''}`,
    `statusd serve (${engine}) on a seeded dataset per size; one loop PATCHes a status with an API key, one request at a time, for durationS alone, then for at least as long while statusd backup runs as its own process, one backup after another; backupSeconds is the median of the CLI's own times, backupBytes the tar's size; then statusd restore of the last backup into an empty database, its own time`,
  ),
  kind: 'backup',
  params: { engine, history, durationS },
  rows,
  errors,
}
console.log(JSON.stringify(result, null, 2))
if (errors > 0) console.error(`bench: ${errors} PATCH errors: not a result`)
else if (!values['no-write']) console.error(`bench: wrote ${writeResult(result)}`)
