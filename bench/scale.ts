// Scale bench: how statusd's cost grows with the data. For each size it seeds N statuses of
// one user and N × H history rows (Zipf-skewed by default), starts `statusd serve` on the
// SQLite file as users run it, and drives it with wrk:
//   - PATCH /v1/status/:id {"value":"80%"} over the statuses in random order;
//   - GET /v1/user/status?limit=L&cursor=C at random positions of the whole list;
//   - GET /v1/status/:id/history?limit=L&cursor=C at random history rows (so a status is
//     picked in proportion to its history, and pages land deep in long histories).
// Cursors are encoded by src/lib/cursor.ts itself and checked against the API's own Link
// headers before measuring. Rounds are interleaved over the sizes, each on a fresh copy of
// the dataset. Prints, and writes to bench/results/ (bench/results.ts), per size and
// operation: req/s, p50 and p99 with --connections clients, p50 and p99 with one client, the
// service call's own time in process (no HTTP), and the change in req/s against the smallest
// size; also the query plans at the largest size (bench/query-plans.ts).
//
// With BENCH_DATABASE_URL=postgres://… it runs on PostgreSQL instead: each size is a database
// of its own on that server (statusd_scale_<n>_h<H>_<distribution>, its rows made by the
// server itself: bench/seed.ts), each round a copy of it (CREATE DATABASE … TEMPLATE), and
// the figures add the database server's CPU and WAL per request (its processes must be on
// this host for the CPU). The URL's role must be allowed to create databases; the database it
// names is only connected to.
//   node bench/scale.ts [--sizes 10000,100000,1000000] [--history 10] [--distribution zipf]
//                       [--rounds 3] [--duration 10] [--connections 32] [--limit 50]
//                       [--dir /tmp/statusd-scale] [--keep] [--no-write] [--seed-only]
// --seed-only seeds the datasets (or finds them) and keeps them, measuring nothing: a run
// with --keep after it measures at once (seed outside the benchmark lock, measure inside).
import type { ChildProcess } from 'node:child_process'
import {
  closeSync,
  copyFileSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { createDatabase } from '../src/db/create-database.ts'
import { isPostgresUrl } from '../src/db/postgres/postgres-engine.ts'
import { encodeCursor } from '../src/lib/cursor.ts'
import { loadPlansFile } from '../src/modules/plans/plans.ts'
import { listStatusHistory } from '../src/modules/statuses/history.service.ts'
import { accessById } from '../src/modules/statuses/sharing.service.ts'
import { listOwned, updateStatusById } from '../src/modules/statuses/statuses.service.ts'
import {
  explainHotPaths,
  type PlannedOperation,
  plansToMarkdown,
  rollbackWriter,
  samplePositions,
} from './query-plans.ts'
import { runInfo, type ScaleResult, type ScaleRow, writeResult } from './results.ts'
import {
  assertWrkInstalled,
  cpuMicros,
  median,
  PLANS_FILE,
  peakRssMb,
  ROOT,
  runWrk,
  startServer,
  statusdCommand,
  stopServer,
  takePort,
  type WrkMode,
} from './rig.ts'
import {
  createDatabaseOn,
  type Distribution,
  databaseOn,
  dropDatabase,
  prng,
  type SeedResult,
  seedOrReuse,
} from './seed.ts'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    history: { type: 'string', default: '10' },
    distribution: { type: 'string', default: 'zipf' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    limit: { type: 'string', default: '50' },
    dir: { type: 'string', default: '/tmp/statusd-scale' },
    keep: { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    'seed-only': { type: 'boolean', default: false },
  },
})
const SIZES = values.sizes.split(',').map((s) => Number(s.replace(/_/g, '')))
const HISTORY = Number(values.history)
const DISTRIBUTION = values.distribution as Distribution
const ROUNDS = Number(values.rounds)
const DURATION = Number(values.duration)
const CONNECTIONS = Number(values.connections)
const LIMIT = Number(values.limit)
const DIR = values.dir
/** Request targets per operation: wrk walks them from a random offset, over and over. */
const TARGETS = 50_000
if (DISTRIBUTION !== 'uniform' && DISTRIBUTION !== 'zipf')
  throw new Error('--distribution is uniform or zipf')
if (SIZES.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--sizes: positive integers')
/** PostgreSQL mode: the server the datasets live on (else SQLite files in --dir). */
const PG_SERVER = process.env.BENCH_DATABASE_URL || undefined
if (PG_SERVER !== undefined && !isPostgresUrl(PG_SERVER))
  throw new Error('BENCH_DATABASE_URL: a postgres:// URL')
/** A size's dataset on PostgreSQL, and its copy for one round. */
const pgDatabase = (n: number, round?: number) =>
  `statusd_scale_${n}_h${String(HISTORY).replace(/\W/g, '_')}_${DISTRIBUTION}${round === undefined ? '' : `_round_${round}`}`

type Operation = 'patch' | 'list' | 'history'
const OPERATIONS: { op: Operation; mode: WrkMode; label: string }[] = [
  // reads first: the PATCH run adds history rows to the copy
  { op: 'list', mode: 'get', label: `list page (\`GET /v1/user/status?limit=${LIMIT}&cursor=…\`)` },
  {
    op: 'history',
    mode: 'get',
    label: `history page (\`GET /v1/status/:id/history?limit=${LIMIT}&cursor=…\`)`,
  },
  { op: 'patch', mode: 'patch', label: 'PATCH value by id' },
]

interface Dataset {
  n: number
  dir: string
  /** The seeded dataset: SQLite's file, or PostgreSQL's database (never measured on). */
  seedUrl: string
  data: SeedResult
  bytes: number
  files: Record<Operation, string>
}

interface Sample {
  /** With CONNECTIONS clients. */
  rps: number
  /** The server's CPU time per request (all threads; the event loop's alone), µs. */
  cpuUs: number
  mainUs: number
  /** The event loop's CPU time over the run's wall time (1: never waited). */
  mainBusy: number
  p50ms: number
  p99ms: number
  /** With one client. */
  oneP50ms: number
  oneP99ms: number
  /** The service call alone, in process (no HTTP, a PATCH rolled back). */
  serviceP50us: number
  serviceP99us: number
  rssMb: number
  bad: number
  /** PostgreSQL: the database server's CPU time (all its processes) and WAL per request. */
  dbCpuUs: number | null
  walBytes: number | null
}

/** Seeds one size (or reuses a dataset of the same shape left by `--keep`). */
async function prepare(n: number): Promise<Dataset> {
  const dir = join(DIR, `${PG_SERVER ? 'pg-' : ''}n${n}-h${HISTORY}-${DISTRIBUTION}`)
  const seedUrl = PG_SERVER
    ? databaseOn(PG_SERVER, pgDatabase(n))
    : `sqlite:${join(dir, 'seed.db')}`
  const data = await seedOrReuse(
    {
      dir,
      statuses: n,
      history: HISTORY,
      distribution: DISTRIBUTION,
      ...(PG_SERVER && { databaseUrl: seedUrl, serverUrl: PG_SERVER }),
    },
    'scale',
  )
  return {
    n,
    dir,
    seedUrl,
    data,
    bytes: PG_SERVER
      ? Number(await pgValue(seedUrl, 'select pg_database_size(current_database()) as v'))
      : statSync(join(dir, 'seed.db')).size,
    files: writeTargets(dir, await readStatuses(seedUrl), n),
  }
}

interface StatusPosition {
  id: string
  created_at: string
  change_count: number
}

/** Every status's place in the list and its history's length, in list order. */
async function readStatuses(url: string): Promise<StatusPosition[]> {
  const query = 'select id, created_at, change_count from statuses order by created_at, id'
  if (!isPostgresUrl(url)) {
    const db = new SQLite(url.slice('sqlite:'.length), { readonly: true })
    const rows = db.prepare(query).all() as StatusPosition[]
    db.close()
    return rows
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    // change_count is a bigint: pg gives it as a string
    const { rows } = await client.query<StatusPosition>(
      query.replace('change_count', 'change_count::float8 as change_count'),
    )
    return rows
  } finally {
    await client.end()
  }
}

/** The first column of a query's first row, on PostgreSQL. */
async function pgValue(url: string, query: string, params: unknown[] = []): Promise<unknown> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query(query, params)
    return rows[0] ? Object.values(rows[0])[0] : undefined
  } finally {
    await client.end()
  }
}

/**
 * Request targets, read from the dataset itself: PATCH ids in random order, list pages at
 * random positions, history pages at random history rows.
 */
function writeTargets(dir: string, rows: StatusPosition[], n: number): Record<Operation, string> {
  const random = prng(0xca11 ^ n)
  const pick = (k: number) => Math.floor(random() * k)
  const count = Math.min(TARGETS, n)
  const patch: string[] = []
  for (let k = 0; k < count; k++) patch.push((rows[pick(n)] as (typeof rows)[number]).id)
  const list: string[] = []
  for (let k = 0; k < TARGETS; k++) {
    const at = rows[pick(n)] as (typeof rows)[number]
    list.push(`/v1/user/status?limit=${LIMIT}&cursor=${encodeCursor([at.created_at, at.id])}`)
  }
  // cumulative history counts: a uniform history row is a status in proportion to its history
  const cumulative = new Float64Array(n + 1)
  for (let i = 0; i < n; i++)
    cumulative[i + 1] = (cumulative[i] as number) + (rows[i] as (typeof rows)[number]).change_count
  const total = cumulative[n] as number
  const history: string[] = []
  for (let k = 0; k < TARGETS && total > 0; k++) {
    const r = pick(total)
    let lo = 0
    let hi = n
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1
      if ((cumulative[mid] as number) <= r) lo = mid
      else hi = mid
    }
    const changeNo = r - (cumulative[lo] as number) + 1
    // the page starts at that entry: entries below change_no + 1, newest first
    history.push(
      `/v1/status/${(rows[lo] as (typeof rows)[number]).id}/history?limit=${LIMIT}&cursor=${encodeCursor([String(changeNo + 1)])}`,
    )
  }
  const files = {
    patch: join(dir, 'targets-patch.txt'),
    list: join(dir, 'targets-list.txt'),
    history: join(dir, 'targets-history.txt'),
  }
  writeFileSync(files.patch, `${patch.join('\n')}\n`)
  writeFileSync(files.list, `${list.join('\n')}\n`)
  writeFileSync(files.history, `${history.join('\n')}\n`)
  return files
}

/**
 * Proves the cursors are the API's own: a list page's Link names the cursor this script
 * would encode for the page's last entry, and a history page at a cursor starts where asked.
 */
async function checkCursors(port: number, set: Dataset): Promise<void> {
  const headers = { 'service-api-key': set.data.key }
  const base = `http://127.0.0.1:${port}`
  const [listPath] = readFileSync(set.files.list, 'utf8').split('\n', 1) as [string]
  const res = await fetch(base + listPath, { headers })
  const page = (await res.json()) as { statusId: string }[]
  if (res.status !== 200) throw new Error(`scale: list page answered ${res.status}`)
  const link = res.headers.get('link')
  if (page.length === LIMIT && link) {
    const lastId = (page[page.length - 1] as { statusId: string }).statusId
    const query = 'select created_at from statuses where id = $1'
    let createdAt: string
    if (PG_SERVER) createdAt = (await pgValue(set.seedUrl, query, [lastId])) as string
    else {
      const db = new SQLite(set.seedUrl.slice('sqlite:'.length), { readonly: true })
      createdAt = (db.prepare(query.replace('$1', '?')).get(lastId) as { created_at: string })
        .created_at
      db.close()
    }
    const ours = encodeCursor([createdAt, lastId])
    if (!link.includes(`cursor=${ours}>`))
      throw new Error(`scale: the API's next cursor is not ours:\n${link}\n${ours}`)
  }
  const [historyPath] = readFileSync(set.files.history, 'utf8').split('\n', 1) as [string]
  const h = await fetch(base + historyPath, { headers })
  if (h.status !== 200) throw new Error(`scale: history page answered ${h.status}`)
  const entries = (await h.json()) as { value: string }[]
  const before = Number(
    JSON.parse(Buffer.from(historyPath.split('cursor=')[1] as string, 'base64url').toString())[0],
  )
  // the seed's values are change_no % 100 followed by '%'
  if (entries[0]?.value !== `${(before - 1) % 100}%`)
    throw new Error(`scale: the history page at ${historyPath} does not start where asked`)
}

/** Service calls timed in process, per operation. */
const SERVICE_CALLS = 2000

/**
 * The database work of each operation without HTTP: the service functions statusd's routes
 * call, on the same targets, one call at a time (a PATCH in a transaction that is rolled
 * back, so no commit and no fsync). How this grows with the data is the query cost alone.
 */
async function timeServices(
  url: string,
  set: Dataset,
): Promise<Record<Operation, { p50us: number; p99us: number }>> {
  const database = createDatabase(url)
  const deps = { db: database.db, plans: loadPlansFile(PLANS_FILE) }
  const caller = { userId: set.data.userId, plan: 'unlimited' }
  const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n')
  const parse = (path: string) => new URL(path, 'http://localhost')
  const cursor = (path: string) => parse(path).searchParams.get('cursor') ?? undefined
  const time = async (items: string[], call: (item: string) => Promise<unknown>) => {
    for (const item of items.slice(-200)) await call(item) // warm-up: statement cache, JIT
    const took: number[] = []
    for (const item of items.slice(0, SERVICE_CALLS)) {
      const started = performance.now()
      await call(item)
      took.push(performance.now() - started)
    }
    took.sort((a, b) => a - b)
    const at = (q: number) =>
      (took[Math.min(took.length - 1, Math.floor(q * took.length))] ?? 0) * 1000
    return { p50us: at(0.5), p99us: at(0.99) }
  }
  try {
    return {
      list: await time(lines(set.files.list), (path) =>
        listOwned(deps, caller, { limit: LIMIT, cursor: cursor(path) }),
      ),
      history: await time(lines(set.files.history), async (path) =>
        listStatusHistory(
          deps,
          await accessById(deps.db, caller, parse(path).pathname.split('/')[3] as string),
          { limit: LIMIT, cursor: cursor(path) },
        ),
      ),
      patch: await time(lines(set.files.patch), (id) =>
        updateStatusById({ ...deps, writer: rollbackWriter(deps.db) }, caller, id, {
          value: '80%',
        }),
      ),
    }
  } finally {
    await database.close()
  }
}

/**
 * A copy of the dataset for one round, on disk before the server starts: its URL, and how
 * to remove it.
 */
async function freshCopy(
  set: Dataset,
  round: number,
): Promise<{ url: string; remove(): Promise<void> }> {
  if (PG_SERVER) {
    const server = PG_SERVER
    const name = pgDatabase(set.n, round)
    await dropDatabase(server, name)
    // note: CREATE DATABASE writes the copy's files and fsyncs them before it answers
    await createDatabaseOn(server, name, pgDatabase(set.n))
    return { url: databaseOn(server, name), remove: () => dropDatabase(server, name) }
  }
  const file = join(set.dir, `round-${round}.db`)
  copyFileSync(set.seedUrl.slice('sqlite:'.length), file)
  const fd = openSync(file, 'r+')
  fsyncSync(fd)
  closeSync(fd)
  return { url: `sqlite:${file}`, remove: async () => removeDb(file) }
}

function removeDb(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true })
}

/**
 * PostgreSQL's side of a run: the CPU time of the server's processes (the postmaster and
 * its children, read from /proc: null when the server is not on this host) and the WAL
 * position. A backend that exits during the run takes its CPU time with it; statusd's pool
 * keeps its connections for the run.
 */
async function pgCounters(url: string): Promise<{ cpuUs: number | null; walLsn: string }> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query(
      'select pg_backend_pid() as pid, pg_current_wal_lsn()::text as lsn',
    )
    return { cpuUs: serverCpuMicros(rows[0].pid as number), walLsn: rows[0].lsn as string }
  } finally {
    await client.end()
  }
}

function serverCpuMicros(backendPid: number): number | null {
  const parentOf = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  }
  let postmaster: number
  try {
    postmaster = parentOf(backendPid)
  } catch {
    return null // not on this host
  }
  let total = cpuMicros(postmaster)
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === postmaster) continue
    try {
      if (parentOf(pid) === postmaster) total += cpuMicros(pid)
    } catch {
      // it exited meanwhile
    }
  }
  return total
}

/** The PostgreSQL server's version and the settings that decide a write's cost. */
async function serverSettings(url: string): Promise<NonNullable<ScaleResult['postgres']>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query(
      `select name, setting, unit from pg_settings where name = any($1)`,
      [
        [
          'server_version',
          'fsync',
          'synchronous_commit',
          'full_page_writes',
          'shared_buffers',
          'wal_level',
          'max_wal_size',
          'checkpoint_timeout',
        ],
      ],
    )
    return Object.fromEntries(
      rows.map((r) => [r.name, r.unit ? `${r.setting} × ${r.unit}` : r.setting]),
    )
  } finally {
    await client.end()
  }
}

/** WAL bytes between two positions (`X/Y`, as pg_current_wal_lsn gives them). */
const walBetween = (from: string, to: string): number => {
  const at = (lsn: string) => {
    const [high, low] = lsn.split('/') as [string, string]
    return Number.parseInt(high, 16) * 2 ** 32 + Number.parseInt(low, 16)
  }
  return at(to) - at(from)
}

function assertDiskSpace(): void {
  // note: on PostgreSQL the datasets are the server's; --dir keeps the request targets only
  if (PG_SERVER) return
  // about 1.7 kB a status at 10 history rows each, and one working copy beside the seed
  const needed = SIZES.reduce((sum, n) => sum + n * (200 + 150 * HISTORY) * 2.2, 0)
  mkdirSync(DIR, { recursive: true })
  const { bavail, bsize } = statfsSync(DIR)
  const free = bavail * bsize
  console.error(
    `scale: about ${(needed / 2 ** 30).toFixed(1)} GiB needed in ${DIR}, ${(free / 2 ** 30).toFixed(1)} GiB free`,
  )
  if (free < needed * 1.2) throw new Error('scale: not enough disk space')
}

async function main() {
  assertWrkInstalled()
  assertDiskSpace()
  const sets: Dataset[] = []
  for (const n of SIZES) sets.push(await prepare(n))
  if (values['seed-only']) return
  const samples = new Map<string, Sample[]>()
  let plans: PlannedOperation[] | undefined
  for (let round = 1; round <= ROUNDS; round++) {
    for (const set of sets) {
      const copy = await freshCopy(set, round)
      const { url } = copy
      if (round === 1 && set === sets[sets.length - 1])
        plans = await explainHotPaths(url, await samplePositions(url))
      const services = await timeServices(url, set)
      const port = takePort()
      let child: ChildProcess | undefined
      try {
        child = await startServer(`statusd (${set.n})`, port, statusdCommand(port, url), 60_000)
        if (round === 1) await checkCursors(port, set)
        for (const { op, mode } of OPERATIONS) {
          const wrk = {
            port,
            connections: CONNECTIONS,
            mode,
            key: set.data.key,
            targets: set.files[op],
          }
          runWrk({ ...wrk, seconds: 2 }) // warm-up: JIT, caches, connections
          const pid = child.pid as number
          const dbBefore = PG_SERVER ? await pgCounters(url) : null
          const cpuBefore = cpuMicros(pid)
          const mainBefore = cpuMicros(pid, pid)
          const r = runWrk({ ...wrk, seconds: DURATION })
          const requests = Math.max(1, r.requests)
          const cpuUs = (cpuMicros(pid) - cpuBefore) / requests
          const mainUs = (cpuMicros(pid, pid) - mainBefore) / requests
          const dbAfter = PG_SERVER ? await pgCounters(url) : null
          const dbCpuUs =
            dbBefore?.cpuUs != null && dbAfter?.cpuUs != null
              ? (dbAfter.cpuUs - dbBefore.cpuUs) / requests
              : null
          const walBytes =
            dbBefore && dbAfter ? walBetween(dbBefore.walLsn, dbAfter.walLsn) / requests : null
          // the event loop's share of the run's wall time: below ~95 % it waited (for the disk)
          const mainBusy = (mainUs * r.rps) / 1e6
          // one client at a time: the time a request takes, without waiting in line
          const one = runWrk({ ...wrk, connections: 1, seconds: DURATION })
          const sample: Sample = {
            rps: r.rps,
            cpuUs,
            mainUs,
            mainBusy,
            p50ms: r.p50ms,
            p99ms: r.p99ms,
            oneP50ms: one.p50ms,
            oneP99ms: one.p99ms,
            serviceP50us: services[op].p50us,
            serviceP99us: services[op].p99us,
            rssMb: peakRssMb(child.pid as number),
            bad: r.non2xx + r.socketErrors + one.non2xx + one.socketErrors,
            dbCpuUs,
            walBytes,
          }
          const key = `${set.n}:${op}`
          samples.set(key, [...(samples.get(key) ?? []), sample])
          console.error(
            `scale: round ${round} ${set.n} ${op}: ${r.rps.toFixed(0)} req/s, CPU ${cpuUs.toFixed(0)} µs/request (event loop ${mainUs.toFixed(0)} µs, busy ${(mainBusy * 100).toFixed(0)} %), p50 ${r.p50ms.toFixed(2)} ms, p99 ${r.p99ms.toFixed(2)} ms; one client: p50 ${one.p50ms.toFixed(2)} ms, p99 ${one.p99ms.toFixed(2)} ms; in process: p50 ${services[op].p50us.toFixed(0)} µs, p99 ${services[op].p99us.toFixed(0)} µs${dbCpuUs === null ? '' : `; database CPU ${dbCpuUs.toFixed(0)} µs/request`}${walBytes === null ? '' : `, WAL ${walBytes.toFixed(0)} bytes/request`}${sample.bad ? `, ${sample.bad} errors!` : ''}`,
          )
        }
      } finally {
        if (child) await stopServer(child)
        await copy.remove()
      }
    }
  }
  report(sets, samples, plans ?? [], PG_SERVER ? await serverSettings(PG_SERVER) : undefined)
  if (!values.keep)
    for (const set of sets) {
      rmSync(set.dir, { recursive: true, force: true })
      if (PG_SERVER) await dropDatabase(PG_SERVER, pgDatabase(set.n))
    }
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`
/** The median of figures that may be missing (null: not measured), with its unit, or `–`. */
const orDash = (xs: (number | null)[], unit: string) => {
  const known = xs.filter((x): x is number => x !== null)
  return known.length === 0 ? '–' : `${median(known).toFixed(0)}${unit}`
}
const medianOrNull = (xs: (number | null)[]) => {
  const known = xs.filter((x): x is number => x !== null)
  return known.length === 0 ? null : Number(median(known).toFixed(0))
}
const thousands = (n: number) => n.toLocaleString('en-US').replace(/,/g, ' ')

function report(
  sets: Dataset[],
  samples: Map<string, Sample[]>,
  plans: PlannedOperation[],
  postgres: ScaleResult['postgres'],
) {
  const smallest = sets[0] as Dataset
  const rows: string[] = []
  for (const set of sets) {
    for (const { op, label } of OPERATIONS) {
      const s = samples.get(`${set.n}:${op}`) ?? []
      if (s.length === 0) continue
      const rps = median(s.map((x) => x.rps))
      const base = median((samples.get(`${smallest.n}:${op}`) ?? []).map((x) => x.rps))
      const change = set === smallest ? '–' : `${(((rps - base) / base) * 100).toFixed(1)} %`
      const cpu = median(s.map((x) => x.cpuUs))
      const baseCpu = median((samples.get(`${smallest.n}:${op}`) ?? []).map((x) => x.cpuUs))
      const cpuChange =
        set === smallest
          ? ''
          : ` (${cpu >= baseCpu ? '+' : ''}${(((cpu - baseCpu) / baseCpu) * 100).toFixed(1)} %)`
      const ms = (pick: (x: Sample) => number) => `${median(s.map(pick)).toFixed(2)} ms`
      const us = (pick: (x: Sample) => number) => `${median(s.map(pick)).toFixed(0)} µs`
      rows.push(
        `| ${thousands(set.n)} | ${thousands(set.data.historyRows)} | ${mb(set.bytes)} | ${label} | ${rps.toFixed(0)} | ${change} | ${cpu.toFixed(0)} µs${cpuChange} |${
          PG_SERVER
            ? ` ${orDash(
                s.map((x) => x.dbCpuUs),
                ' µs',
              )} | ${orDash(
                s.map((x) => x.walBytes),
                ' B',
              )} |`
            : ''
        } ${us((x) => x.mainUs)}, ${median(s.map((x) => x.mainBusy * 100)).toFixed(0)} % | ${ms((x) => x.p50ms)} | ${ms((x) => x.p99ms)} | ${ms((x) => x.oneP50ms)} | ${ms((x) => x.oneP99ms)} | ${us((x) => x.serviceP50us)} | ${us((x) => x.serviceP99us)} | ${Math.max(...s.map((x) => x.rssMb)).toFixed(0)} MB | ${s.reduce((n, x) => n + x.bad, 0)} |`,
      )
    }
  }
  const largest = sets[sets.length - 1] as Dataset
  const suspicious = plans.some((p) => p.statements.some((s) => s.suspicious))
  // note: the command as the results' schema has it; `engine` says which engine ran
  const command = `npm run bench:scale -- --sizes ${SIZES.join(',')} --history ${HISTORY} --distribution ${DISTRIBUTION} --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS} --limit ${LIMIT}`
  const method = `one user on an unlimited plan; ${HISTORY} history rows per status on average, ${DISTRIBUTION === 'zipf' ? 'Zipf-skewed' : 'evenly spread'}. ${PG_SERVER ? "statusd on PostgreSQL (each round on a copy of the size's database made with CREATE DATABASE … TEMPLATE; database CPU is the server's processes' from /proc, WAL the advance of pg_current_wal_lsn(), both per request over the same run)" : 'statusd on SQLite (durable)'}; per operation a 2 s warm-up, then wrk -t1 -c${CONNECTIONS} -d${DURATION}s (throughput, and latency under load) and wrk -t1 -c1 -d${DURATION}s (latency of one request at a time); CPU per request is the server's (all threads, from /proc) over the ${CONNECTIONS}-connection run, and the event loop's alone with the share of the run it was busy (below ~95 % it waited, for the disk); "in process" is the service call alone, without HTTP, over ${SERVICE_CALLS} of the same targets (a PATCH rolled back: no commit, no fsync); medians of ${ROUNDS} rounds interleaved over the sizes, each on a fresh copy; peak RSS is the server's over all three operations.`
  const round = (n: number, digits = 0) => Number(n.toFixed(digits))
  const data: ScaleRow[] = []
  for (const set of sets) {
    for (const { op } of OPERATIONS) {
      const s = samples.get(`${set.n}:${op}`) ?? []
      if (s.length === 0) continue
      const m = (pick: (x: Sample) => number, digits = 0) => round(median(s.map(pick)), digits)
      const base = median((samples.get(`${smallest.n}:${op}`) ?? []).map((x) => x.rps))
      data.push({
        statuses: set.n,
        historyRows: set.data.historyRows,
        databaseMb: round(set.bytes / 2 ** 20),
        operation: op,
        reqPerS: m((x) => x.rps),
        vsSmallestPct:
          set === smallest ? null : round(((median(s.map((x) => x.rps)) - base) / base) * 100, 1),
        cpuUsPerRequest: m((x) => x.cpuUs),
        eventLoopUsPerRequest: m((x) => x.mainUs),
        eventLoopBusyPct: m((x) => x.mainBusy * 100),
        p50Ms: m((x) => x.p50ms, 2),
        p99Ms: m((x) => x.p99ms, 2),
        oneClientP50Ms: m((x) => x.oneP50ms, 2),
        oneClientP99Ms: m((x) => x.oneP99ms, 2),
        inProcessP50Us: m((x) => x.serviceP50us),
        inProcessP99Us: m((x) => x.serviceP99us),
        peakRssMb: round(Math.max(...s.map((x) => x.rssMb))),
        errors: s.reduce((n, x) => n + x.bad, 0),
        ...(PG_SERVER && {
          databaseCpuUsPerRequest: medianOrNull(s.map((x) => x.dbCpuUs)),
          walBytesPerRequest: medianOrNull(s.map((x) => x.walBytes)),
        }),
      })
    }
  }
  const result: ScaleResult = {
    ...runInfo(ROOT, command, method),
    kind: 'scale',
    engine: PG_SERVER ? 'postgres' : 'sqlite',
    ...(postgres && { postgres }),
    params: {
      sizes: SIZES,
      history: HISTORY,
      distribution: DISTRIBUTION,
      rounds: ROUNDS,
      durationS: DURATION,
      connections: CONNECTIONS,
      limit: LIMIT,
    },
    busiestStatusHistoryRows: DISTRIBUTION === 'zipf' ? largest.data.maxHistory : null,
    seedingS: sets.map((s) => round(s.data.seconds)),
    rows: data,
    queryPlans: plans.map((p) => ({
      operation: p.operation,
      statements: p.statements.flatMap((s) =>
        s.plan.map((line) => `${line.trim()}${s.suspicious ? ' ⚠' : ''}`),
      ),
    })),
  }
  const section = [
    command,
    '',
    `| statuses | history rows | database | operation | req/s (${CONNECTIONS} conn.) | vs smallest | CPU per request |${PG_SERVER ? ' database CPU per request | WAL per request |' : ''} event loop per request, busy | p50 (${CONNECTIONS} conn.) | p99 (${CONNECTIONS} conn.) | p50 (1 conn.) | p99 (1 conn.) | in process p50 | in process p99 | peak RSS | errors |`,
    `|---|---|---|---|---|---|---|${PG_SERVER ? '---|---|' : ''}---|---|---|---|---|---|---|---|---|`,
    ...rows,
    '',
    `Query plans at ${thousands(largest.n)} statuses: ${suspicious ? '**a scan or a sort, marked ⚠**' : 'index searches only, no scan, no sort'}.`,
    '',
    plansToMarkdown(plans, true),
    '',
  ].join('\n')
  process.stdout.write(`\n${section}\n`)
  if (!values['no-write']) writeResult(result)
}

await main()
