// Benchmark results as data. Every bench script that measures a run writes one JSON file to
// bench/results/, named `<date>-<nn>-<kind>.json` (nn orders the runs of one day), and the
// files are committed: docs/performance.md quotes them and bench/chart.ts draws them. The
// types below are the schema; a change to it that old files do not follow bumps `schema`.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'

export const RESULTS_DIR = join(new URL('..', import.meta.url).pathname, 'bench/results')

/** The hardware and runtime a run was measured on: runs on different hosts compare by ratio. */
export interface Host {
  cpus: number
  /** The CPU model as the OS reports it (`os.cpus()[0].model`). */
  cpu: string
  memoryGiB: number
  /** Node's version, `v24.…`. */
  node: string
}

interface ResultBase {
  schema: 1
  /** ISO date (UTC) of the run. */
  date: string
  /** The commit measured; null when not known (runs recorded before results were data). */
  commit: string | null
  /** The checkout had uncommitted changes. */
  dirty?: boolean
  /** For runs recorded before results were data: the commit that first recorded it. */
  recordedIn?: string
  host: Host
  /** The command that produced the run, as typed. */
  command: string
  /** What the run measured and how, in words. */
  method: string
}

/** `npm run bench`: statusd and its peers under the same load, in interleaved rounds. */
export interface RigResult extends ResultBase {
  kind: 'rig'
  params: { rounds: number; durationS: number; connections: number; statuses: number }
  targets: RigTarget[]
  /** Median time from spawn to the first 200 from `/readyz`. */
  coldStartMs: number | null
  /**
   * Median CPU time (user + system, all threads) the process had used by then: unlike the
   * wall time, it hardly grows when other work shares the machine.
   */
  coldStartCpuMs?: number | null
  coldStartRuns: number | null
}

/** One target of a rig run: medians over the rounds, peak RSS the highest. */
export interface RigTarget {
  /** `raw`, `naive`, `lean`, `statusd-patch`, `statusd-post`, `statusd-patch-pg`, … */
  name: string
  label: string
  /** The storage engine behind it; null for the raw `node:http` peer, which stores nothing. */
  engine: 'sqlite' | 'postgres' | null
  reqPerS: number | null
  /**
   * req/s against the raw, naive and lean peers of the same run (null: peer not run); a
   * PostgreSQL target also against the lean PostgreSQL peer and statusd's SQLite PATCH.
   */
  ratio: {
    raw: number | null
    naive: number | null
    lean: number | null
    leanPg?: number | null
    statusdSqlite?: number | null
  }
  p50Ms: number | null
  p99Ms: number | null
  peakRssMb: number | null
  /** The server's CPU time (all threads, user + system) per answered request. */
  cpuUsPerRequest: number | null
  /** The SQLite write-ahead log's size at the end of the run (largest over the rounds). */
  walMb: number | null
  /** Non-2xx answers and socket errors: a run with any is not a result. */
  errors: number | null
}

/** `npm run bench:fanout`: one change delivered to N live subscribers. */
export interface FanoutResult extends ResultBase {
  kind: 'fanout'
  engine: 'sqlite'
  params: { subscribers: number; updates: number }
  p50Ms: number
  p99Ms: number
  maxMs: number
  missing: number
}

/** `npm run bench:scale`: how the cost of each operation grows with the data. */
export interface ScaleResult extends ResultBase {
  kind: 'scale'
  engine: 'sqlite' | 'postgres'
  /** On PostgreSQL: the server's version and settings (pg_settings: setting × unit). */
  postgres?: Record<string, string>
  params: {
    sizes: number[]
    history: number
    distribution: string
    rounds: number
    durationS: number
    connections: number
    limit: number
  }
  busiestStatusHistoryRows: number | null
  seedingS: (number | null)[]
  rows: ScaleRow[]
  queryPlans: { operation: string; statements: string[] }[]
}

export interface ScaleRow {
  statuses: number | null
  historyRows: number | null
  databaseMb: number | null
  operation: 'list' | 'history' | 'patch'
  reqPerS: number | null
  /** Change in req/s against the smallest size, in percent (null at the smallest). */
  vsSmallestPct: number | null
  cpuUsPerRequest: number | null
  eventLoopUsPerRequest: number | null
  /** Share of the run the event loop was busy; below about 95 % it waited (for the disk). */
  eventLoopBusyPct: number | null
  p50Ms: number | null
  p99Ms: number | null
  oneClientP50Ms: number | null
  oneClientP99Ms: number | null
  /** The service call alone, without HTTP (a PATCH rolled back). */
  inProcessP50Us: number | null
  inProcessP99Us: number | null
  peakRssMb: number | null
  errors: number | null
  /** On PostgreSQL: the database server's CPU time (all its processes) per request. */
  databaseCpuUsPerRequest?: number | null
  /** On PostgreSQL: WAL written per request, in bytes. */
  walBytesPerRequest?: number | null
}

/**
 * bench/layout.ts (gone with the migrations it ran both ways): one table stored two ways,
 * calls alternated in one process. Its results stay in bench/results/.
 */
export interface LayoutResult extends ResultBase {
  kind: 'layout'
  engine: 'sqlite'
  params: { table: string; statuses: number; history: number; samples: number }
  migrationS: number | null
  layouts: {
    layout: 'rowid' | 'clustered'
    label: string
    databaseMb: number | null
    historyPageP50Us: number | null
    historyPageP99Us: number | null
    listPageP50Us: number | null
    listPageP99Us: number | null
    patchRolledBackP50Us: number | null
    patchRolledBackP99Us: number | null
    pagesLoggedPerPatch: number | null
  }[]
}

/** `npm run bench:versus`: this checkout against another build, alternated. */
export interface VersusResult extends ResultBase {
  kind: 'versus'
  engine: 'sqlite'
  params: {
    statuses: number
    history: number
    distribution: string
    rounds: number
    durationS: number
    connections: number
  }
  builds: {
    build: 'this checkout' | 'against'
    /** The other build's commit, when it is a git checkout. */
    commit?: string | null
    rounds: {
      reqPerS: number | null
      cpuUsPerRequest: number | null
      p50Ms: number | null
      p99Ms: number | null
      oneClientP99Ms: number | null
      walMb: number | null
    }[]
    peakRssMb: number | null
    errors: number | null
  }[]
}

/** `npm run bench:signin`: sign-in under load, and what it costs the requests beside it. */
export interface SigninResult extends ResultBase {
  kind: 'signin'
  params: { concurrency: number; durationS: number; accounts: number; scrypt: string }
  /** One password hash verification alone, in this process (libuv's thread pool). */
  hashMs: { p50: number; p99: number; runs: number }
  /** POST /v1/auth/login, `concurrency` at a time, for `durationS`. */
  signIn: { p50Ms: number; p99Ms: number; perS: number; count: number }
  /** GET /v1/user with a session cookie, one at a time: alone, then beside the sign-ins. */
  cheap: { aloneP50Ms: number; aloneP99Ms: number; duringP50Ms: number; duringP99Ms: number }
  /** Non-2xx answers and socket errors: a run with any is not a result. */
  errors: number
}

/** `npm run bench:signin-stall`: keyed writes alone and beside wrong-password sign-ins. */
export interface StallResult extends ResultBase {
  kind: 'stall'
  params: { attackers: number; durationS: number }
  /** PATCH /v1/status/:id with an API key, one at a time: alone, then beside the sign-ins. */
  patch: { alone: LatencyStats; during: LatencyStats }
  /** The sign-ins' answers, by HTTP status. */
  signIns: Record<string, number>
  /** PATCHes not answered 200: a run with any is not a result. */
  errors: number
}

/** `npm run bench:durations`: time in each value over a range, on a status's long history. */
export interface DurationsResult extends ResultBase {
  kind: 'durations'
  params: { engine: 'sqlite' | 'postgres'; rows: number; rounds: number; batch: number }
  rows: {
    range: string
    /** History entries the walk reads: those since `from`, and the one in force at it. */
    entriesRead: number
    /** Distinct values in the answer. */
    values: number
    medianMs: number
    /** The event loop's longest delay while the runs went on. */
    longestStallMs: number
  }[]
}

/** `npm run bench:backup`: backup and restore times and sizes, and writes beside a backup. */
export interface BackupResult extends ResultBase {
  kind: 'backup'
  params: { engine: 'sqlite' | 'postgres'; history: number; durationS: number }
  rows: {
    statuses: number
    historyRows: number
    /** The SQLite file and its log when the run ended; null on PostgreSQL. */
    databaseBytes: number | null
    /** Backups taken one after another while the writes ran beside them. */
    backups: number
    /** Median time of one `statusd backup`, as it reports it. */
    backupSeconds: number
    /** The backup file (the tar). */
    backupBytes: number
    /** `statusd restore` of a backup into an empty database, as it reports it. */
    restoreSeconds: number
    /** PATCH /v1/status/:id with an API key, one at a time: alone, then beside the backups. */
    patch: { alone: LatencyStats; during: LatencyStats }
  }[]
  /** PATCHes not answered 200: a run with any is not a result. */
  errors: number
}

/** `npm run bench:export`: one user's export of many statuses and a long history. */
export interface ExportResult extends ResultBase {
  kind: 'export'
  /** heapMb: the server's V8 heap cap (--max-old-space-size); null: Node's default. */
  params: { engine: 'sqlite' | 'postgres'; history: number; heapMb?: number | null }
  row: {
    statuses: number
    historyRows: number
    /** The document's size as sent. */
    bytes: number
    /** Until the answer's headers arrived. */
    firstByteMs: number
    /** Until its last byte was read. */
    seconds: number
    mbPerS: number
    /** The server's peak RSS (VmHWM) after start and one request, before the export. */
    rssBeforeMb: number
    /** The server's peak RSS once the export was read whole. */
    rssPeakMb: number
  }
}

/** `npm run bench:delete`: an account with many statuses deleted while others write. */
export interface DeleteResult extends ResultBase {
  kind: 'delete'
  /** The host's load average (1, 5, 15 min) when the run began and ended: it is shared. */
  loadAverage?: { before: number[]; after: number[] }
  params: { engine: 'sqlite' | 'postgres'; history: number; writers: number }
  row: {
    statuses: number
    historyRows: number
    /** Until DELETE /v1/user answered: the account, its statuses and everything else gone. */
    answerMs: number
    /** From the DELETE until the history sweep removed the statuses' history. */
    historyGoneS: number
    /** History rows left once the sweep ended (0: all gone). */
    historyRowsLeft: number
    writers: number
    /** Writers' requests that did not succeed. */
    writerFailures: number
    /** The writers' latencies before the DELETE. */
    baseline: LatencyStats
    /** The writers' latencies from the DELETE until the sweep ended. */
    duringDelete: LatencyStats
  }
}

interface LatencyStats {
  p50Ms: number
  p99Ms: number
  maxMs: number
  count: number
}

/** `npm run bench:notify`: writers beside notification rules, fan-out to webhooks, a crash. */
export interface NotifyResult extends ResultBase {
  kind: 'notify'
  /** The host's load average (1, 5, 15 min) when the run began and ended: it is shared. */
  loadAverage?: { before: number[]; after: number[] }
  params: {
    rules: number
    channels: number
    rounds: number
    durationS: number
    connections: number
  }
  /** (a) durable PATCHes of a status with `rules` rules and of one with none, same run. */
  writers: {
    rules: number
    with: { reqPerS: number; p99Ms: number }
    without: { reqPerS: number; p99Ms: number }
    /** req/s with rules ÷ without. */
    throughputRatio: number
    /** The longest wait, after a round, until the worker had fanned out every event. */
    workerCatchUpS: number
    errors: number
  } | null
  /** (b) one change to `channels` webhook channels. */
  fanout: {
    channels: number
    patchMs: number
    /** From the PATCH's response to the last channel's delivery. */
    lastDeliveryS: number
    deliveriesPerS: number
    rssBeforeMb: number
    rssAfterMb: number
    peakRssMb: number
    /** Deliveries a channel got more than once (at least once allows them). */
    duplicates: number
    /** The server's CPU time during the fan-out: all threads, and its main thread. */
    serverCpuS: number
    serverMainThreadCpuS: number
    /** How busy this process's receivers were (0–1): near 1, they were the bottleneck. */
    receiversEventLoopUse: number
    /** Connections the receivers accepted: far fewer than deliveries when kept alive. */
    receiverConnections?: number
  } | null
  /** (c) SIGKILL during the fan-out, then a restart on the same database. */
  crash: {
    channels: number
    deliveredBeforeKill: number
    /** Channels that got the notification in the end. */
    delivered: number
    /** Channels that got it under two different webhook-ids (must be 0). */
    channelsWithTwoIds: number
    /** Deliveries repeated with the same id (allowed). */
    sameIdAgain: number
    restartToLastS: number
  } | null
}

/** `npm run bench:app`: the board in Chromium, live, and the app's first load. */
export interface AppResult extends ResultBase {
  kind: 'app'
  params: { statuses: number; patches: number }
  /** From a PATCH's answer (in the page) to its tile showing the new value. */
  liveP50Ms: number
  liveP99Ms: number
  liveMaxMs: number
  /** From sending the PATCH to the tile showing its value: the whole trip, on the page's clock. */
  roundTripP50Ms: number
  roundTripP99Ms: number
  /** PATCHes whose value no tile showed within 5 s (must be 0). */
  missed: number
  /** The page's first load, gzipped: the entry's JS with its preloaded chunks, and its CSS. */
  firstLoadJsKb: number
  firstLoadCssKb: number
  /** The bytes Chromium fetched for / until the board showed every value (compressed as sent). */
  transferredKb: number
}

/** `npm run bench:timed`: many values ending in the same second, and the writes beside them. */
export interface TimedResult extends ResultBase {
  kind: 'timed'
  params: { engine: 'sqlite' | 'postgres'; statuses: number; writers: number; durationS: number }
  /** How late each end was written: its history entry's time minus the end's. */
  lateness: LatencyStats
  /** PATCH /v1/status/:id by `writers` loops: without ends, then while they are written. */
  patch: {
    alone: LatencyStats & { reqPerS: number }
    during: LatencyStats & { reqPerS: number }
  }
  /** Non-200 answers, or ends not written: a run with any is not a result. */
  errors: number
}

/** `npm run bench:mqtt`: the MQTT bridge's set → state, HTTP writes beside it, takeover. */
export interface MqttResult extends ResultBase {
  kind: 'mqtt'
  params: {
    engine: 'sqlite' | 'postgres'
    statuses: number
    rate: number
    durationS: number
    writers: number
    rounds: number
  }
  /** From a value's publish on …/set to its …/state message; `count` of `sent` arrived. */
  setToState: LatencyStats & { sent: number; rate: number }
  /** PATCH by `writers` loops (the median of `rounds`): the bridge on, off, its broker down. */
  http: {
    on: LatencyStats & { reqPerS: number }
    off: LatencyStats & { reqPerS: number }
    brokerDown: LatencyStats & { reqPerS: number }
  }
  /** From SIGKILL of the bridging instance to the other's `online`. */
  takeoverMs: number
  /** Non-200 answers: a run with any is not a result. */
  errors: number
}

export type Result =
  | MqttResult
  | AppResult
  | TimedResult
  | BackupResult
  | ExportResult
  | DeleteResult
  | NotifyResult
  | RigResult
  | FanoutResult
  | ScaleResult
  | LayoutResult
  | VersusResult
  | SigninResult
  | StallResult
  | DurationsResult

/** The host this process runs on. */
export function thisHost(): Host {
  return {
    cpus: cpus().length,
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  }
}

/** The commit checked out in `root`, and whether it has uncommitted changes. */
export function checkout(root: string): { commit: string | null; dirty?: boolean } {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: 'pipe' }).trim()
    return {
      commit: git('rev-parse', 'HEAD'),
      dirty: git('status', '--porcelain', '--untracked-files=no') !== '',
    }
  } catch {
    return { commit: null }
  }
}

/** The fields every result shares, for a run measured now in the checkout at `root`. */
export function runInfo(
  root: string,
  command: string,
  method: string,
): Pick<ResultBase, 'schema' | 'date' | 'commit' | 'dirty' | 'host' | 'command' | 'method'> {
  return {
    schema: 1,
    date: new Date().toISOString().slice(0, 10),
    ...checkout(root),
    host: thisHost(),
    command,
    method,
  }
}

const FILE = /^(\d{4}-\d{2}-\d{2})-(\d{2,})-([a-z]+)\.json$/

/** Writes a result as the next file of its day; returns the file's path. */
export function writeResult(result: Result, dir = RESULTS_DIR): string {
  mkdirSync(dir, { recursive: true })
  const taken = readdirSync(dir)
    .map((f) => FILE.exec(f))
    .filter((m) => m?.[1] === result.date)
    .map((m) => Number(m?.[2]))
  const nn = String(Math.max(0, ...taken) + 1).padStart(2, '0')
  const { schema, kind, ...rest } = result
  const file = join(dir, `${result.date}-${nn}-${kind}.json`)
  writeFileSync(file, `${JSON.stringify({ schema, kind, ...rest }, null, 2)}\n`)
  console.error(`bench: wrote ${file}`)
  return file
}

/** Every committed result, oldest first (by file name: date, then the day's order). */
export function readResults(dir = RESULTS_DIR): { file: string; result: Result }[] {
  return readdirSync(dir)
    .filter((f) => FILE.test(f))
    .sort()
    .map((file) => ({ file, result: JSON.parse(readFileSync(join(dir, file), 'utf8')) as Result }))
}
