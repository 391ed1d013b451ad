// Notifications bench: (a) writers never wait, (b) fan-out to 10 000 webhooks, (c) a crash
// during fan-out. Prints the figures and writes the run to bench/results/.
//   node bench/notify.ts [--part all|writers|fanout|crash] [--rules 1000] [--channels 10000]
//                        [--rounds 2] [--duration 5] [--connections 32] [--no-write]
//
// Method. statusd runs as its own process (`statusd serve`, SQLite, WEBHOOK_ALLOW_NETWORKS=
// 127.0.0.0/8), each part on a database of its own, seeded before the server starts: the
// users, channels and rules are rows as statusd writes them (bench/seed.ts makes the owner,
// the statuses and the key), so seeding 10 000 subscribers takes a second, not minutes.
//
// (a) Writers: two public statuses, one with `--rules` notification rules ({"when": "any"},
//     each of another user; those users have no channel, so the run measures what rules cost
//     the write and the worker's matching, not deliveries: (b) measures those), one with none.
//     wrk PATCHes one status at a time (durable, as users run statusd), in interleaved rounds
//     (A B B A …), after a 2 s warm-up each; between rounds the bench waits until the worker
//     has fanned out every recorded event, and reports how long that took.
// (b) Fan-out: `--channels` users, each with one `standard` webhook channel to a receiver on
//     loopback (4 HTTP servers in this process, a path per channel) and a rule on one public
//     status. One PATCH; the clock starts at its response and stops when the last channel has
//     its delivery. The server's RSS before the PATCH and after the last delivery, and its
//     peak. Receivers answer 204 at once and check nothing (the tests verify signatures).
// (c) Crash: as (b) on a fresh database; once a third of the channels have their delivery,
//     the server is SIGKILLed, then started again on the same database. Every channel must get
//     the notification, and never two different webhook-ids (the same id again is allowed:
//     at least once); counted per channel. Deliveries the killed server held are retried when
//     their lease (60 s) has run out, so the restart-to-last time includes that wait.
//
// note: the receivers, wrk and the server share the machine (2 cores here): the figures are
// upper bounds on the server's own time.
import { type ChildProcess, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'
import { type NotifyResult, runInfo, writeResult } from './results.ts'
import {
  cpuMicros,
  ROOT,
  runWrk,
  startServer,
  statusdCommand,
  stopServer,
  takePort,
} from './rig.ts'
import { seed } from './seed.ts'

const { values } = parseArgs({
  options: {
    part: { type: 'string', default: 'all' },
    rules: { type: 'string', default: '1000' },
    channels: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    'no-write': { type: 'boolean', default: false },
  },
})
const PART = values.part as 'all' | 'writers' | 'fanout' | 'crash'
const RULES = Number(values.rules)
const CHANNELS = Number(values.channels)
const ROUNDS = Number(values.rounds)
const DURATION = Number(values.duration)
const CONNECTIONS = Number(values.connections)
const ALLOW = '127.0.0.0/8'

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number
}
const median = (xs: number[]) => percentile(xs, 50)
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function rssMb(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0)
  return { now: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 }
}

interface World {
  dir: string
  databaseUrl: string
  file: string
  key: string
  statusIds: string[]
}

/** A seeded database: the owner, `statuses` public statuses and the owner's key. */
async function world(statuses: number): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'statusd-notify-'))
  const seeded = await seed({ dir, statuses, history: 1 })
  const file = seeded.databaseUrl.slice('sqlite:'.length)
  const statusIds = readFileSync(seeded.idsFile, 'utf8').trim().split('\n')
  const db = new SQLite(file)
  db.prepare(`update statuses set access_type = 'public'`).run()
  db.close()
  return { dir, databaseUrl: seeded.databaseUrl, file, key: seeded.key, statusIds }
}

/**
 * `count` users, each with a rule `{"when": "any"}` on `statusId` and, when `channelUrl` is
 * given, one `standard` webhook channel to `channelUrl(i)`: rows as statusd writes them.
 */
function addSubscribers(
  file: string,
  statusId: string,
  count: number,
  channelUrl?: (i: number) => string,
): void {
  const db = new SQLite(file)
  const now = new Date().toISOString()
  const user = db.prepare(
    'insert into users (id, name, email, email_key, plan, verified, created_at, password_hash, email_verified_at) values (?, ?, null, null, ?, 1, ?, null, null)',
  )
  const rule = db.prepare(
    'insert into notification_rules (status_id, user_id, condition, channel_ids, created_at, updated_at) values (?, ?, ?, null, ?, ?)',
  )
  const channel = db.prepare(
    'insert into channels (id, user_id, type, name, config, secret, enabled, verified_at, failing_since, disabled_reason, created_at, updated_at) values (?, ?, ?, ?, ?, ?, 1, ?, null, null, ?, ?)',
  )
  const secret = `whsec_${randomBytes(32).toString('base64')}`
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const userId = `bench-user-${statusId}-${i}`
      user.run(userId, `subscriber ${i}`, 'unlimited', now)
      rule.run(statusId, userId, JSON.stringify('any'), now, now)
      if (channelUrl)
        channel.run(
          `bench-channel-${statusId}-${i}`,
          userId,
          'webhook',
          `receiver ${i}`,
          JSON.stringify({ url: channelUrl(i), format: 'standard' }),
          secret,
          now,
          now,
          now,
        )
    }
  })()
  db.close()
}

/** Events recorded and not fanned out yet (read beside the server: WAL allows it). */
function pendingEvents(file: string): number {
  const db = new SQLite(file, { readonly: true })
  try {
    return (
      db.prepare('select count(*) as n from outbox_events where done_at is null').get() as {
        n: number
      }
    ).n
  } finally {
    db.close()
  }
}

/** Deliveries not settled yet (delivered or given up). */
function pendingDeliveries(file: string): number {
  const db = new SQLite(file, { readonly: true })
  try {
    return (
      db.prepare(`select count(*) as n from deliveries where state = 'pending'`).get() as {
        n: number
      }
    ).n
  } finally {
    db.close()
  }
}

/** Starts statusd on the world's database, with loopback receivers allowed. */
async function serve(w: World, port: number): Promise<ChildProcess> {
  const command = statusdCommand(port, w.databaseUrl)
  command.env.WEBHOOK_ALLOW_NETWORKS = ALLOW
  return startServer('statusd', port, command, 30_000)
}

async function patch(port: number, w: World, statusId: string, value: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/status/${statusId}`, {
    method: 'PATCH',
    headers: { 'service-api-key': w.key, 'content-type': 'application/json' },
    body: JSON.stringify({ value }),
  })
  if (res.status !== 200) throw new Error(`PATCH ${res.status}: ${await res.text()}`)
}

// ---------------------------------------------------------------------------------------
// (a) writers

async function writers(): Promise<NotifyResult['writers']> {
  const w = await world(2)
  const [withRules, without] = w.statusIds as [string, string]
  addSubscribers(w.file, withRules, RULES)
  const port = takePort()
  const server = await serve(w, port)
  const targets = { with: join(w.dir, 'with.txt'), without: join(w.dir, 'without.txt') }
  writeFileSync(targets.with, `${withRules}\n`)
  writeFileSync(targets.without, `${without}\n`)
  const runs: Record<'with' | 'without', { rps: number; p99ms: number }[]> = {
    with: [],
    without: [],
  }
  const drains: number[] = []
  let errors = 0
  try {
    const order: ('with' | 'without')[] = []
    for (let r = 0; r < ROUNDS; r++)
      order.push(
        ...((r % 2 === 0 ? ['with', 'without'] : ['without', 'with']) as ('with' | 'without')[]),
      )
    for (const which of order) {
      const wrk = {
        port,
        connections: CONNECTIONS,
        mode: 'patch' as const,
        key: w.key,
        targets: targets[which],
      }
      runWrk({ ...wrk, seconds: 2 })
      const run = runWrk({ ...wrk, seconds: DURATION })
      errors += run.non2xx + run.socketErrors
      runs[which].push({ rps: run.rps, p99ms: run.p99ms })
      // the worker catches up before the next round, so each round starts alike
      const started = performance.now()
      while (pendingEvents(w.file) > 0 && performance.now() - started < 300_000) await sleep(200)
      drains.push((performance.now() - started) / 1000)
      console.log(
        `writers: ${which} rules: ${Math.round(run.rps)} PATCH/s, p99 ${run.p99ms.toFixed(2)} ms; the worker caught up ${drains.at(-1)?.toFixed(1)} s later`,
      )
    }
  } finally {
    await stopServer(server)
    rmSync(w.dir, { recursive: true, force: true })
  }
  const summary = (xs: { rps: number; p99ms: number }[]) => ({
    reqPerS: Math.round(median(xs.map((x) => x.rps))),
    p99Ms: round(median(xs.map((x) => x.p99ms)), 2),
  })
  const a = summary(runs.with)
  const b = summary(runs.without)
  return {
    rules: RULES,
    with: a,
    without: b,
    throughputRatio: round(a.reqPerS / b.reqPerS, 3),
    workerCatchUpS: round(Math.max(...drains)),
    errors,
  }
}

// ---------------------------------------------------------------------------------------
// receivers

interface Receivers {
  origins: string[]
  /** Per channel index: the webhook-ids received, in order. */
  ids: string[][]
  /** Channels that have had at least one delivery. */
  reached(): number
  /** When the last channel got its first delivery (performance.now()). */
  lastFirstAt(): number
  /** Connections accepted so far (kept alive, one carries many deliveries). */
  connections(): number
  /** Resolves once `n` channels have had a delivery. */
  until(n: number): Promise<void>
  close(): Promise<void>
}

async function startReceivers(channels: number, servers = 4): Promise<Receivers> {
  const ids: string[][] = Array.from({ length: channels }, () => [])
  let reached = 0
  let lastFirstAt = 0
  let connections = 0
  let waiting: { n: number; resolve: () => void }[] = []
  const list: Server[] = []
  for (let s = 0; s < servers; s++) {
    const server = createServer((req, res) => {
      // drain the body; only the path and the id matter here
      req.resume()
      req.on('end', () => {
        const i = Number(req.url?.slice(3))
        const id = String(req.headers['webhook-id'] ?? '')
        const seen = ids[i]
        if (seen) {
          if (seen.length === 0) {
            reached++
            lastFirstAt = performance.now()
            for (const w of waiting) if (reached >= w.n) w.resolve()
            waiting = waiting.filter((w) => reached < w.n)
          }
          seen.push(id)
        }
        res.writeHead(204).end()
      })
    })
    server.keepAliveTimeout = 60_000
    server.on('connection', () => connections++)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    list.push(server)
  }
  const origins = list.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`)
  return {
    origins,
    ids,
    reached: () => reached,
    connections: () => connections,
    lastFirstAt: () => lastFirstAt,
    until: (n) =>
      reached >= n ? Promise.resolve() : new Promise((resolve) => waiting.push({ n, resolve })),
    close: async () => {
      for (const s of list) {
        s.closeAllConnections()
        await new Promise((r) => s.close(r))
      }
    },
  }
}

/** `promise`, or a failure after `ms`; the timer never keeps the process alive. */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms / 1000} s`)), ms)
    timer.unref()
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

// ---------------------------------------------------------------------------------------
// (b) fan-out

async function fanout(): Promise<NotifyResult['fanout']> {
  const receivers = await startReceivers(CHANNELS)
  const w = await world(1)
  const statusId = w.statusIds[0] as string
  const { origins } = receivers
  addSubscribers(w.file, statusId, CHANNELS, (i) => `${origins[i % origins.length]}/c/${i}`)
  const port = takePort()
  const server = await serve(w, port)
  try {
    await sleep(2000) // the worker's first look at an empty outbox, the JIT warm
    const pid = server.pid as number
    const before = rssMb(pid)
    const cpuBefore = { all: cpuMicros(pid), loop: cpuMicros(pid, pid) }
    const elu = performance.eventLoopUtilization()
    const started = performance.now()
    await patch(port, w, statusId, 'CHANGED')
    const answered = performance.now()
    await withTimeout(receivers.until(CHANNELS), 600_000, 'fan-out')
    const seconds = (receivers.lastFirstAt() - answered) / 1000
    const after = rssMb(pid)
    const cpu = {
      all: (cpuMicros(pid) - cpuBefore.all) / 1e6,
      loop: (cpuMicros(pid, pid) - cpuBefore.loop) / 1e6,
    }
    const receiversBusy = performance.eventLoopUtilization(elu).utilization
    const duplicates = receivers.ids.reduce((n, seen) => n + seen.length - 1, 0)
    const result = {
      channels: CHANNELS,
      patchMs: round(answered - started, 2),
      lastDeliveryS: round(seconds, 2),
      deliveriesPerS: Math.round(CHANNELS / seconds),
      rssBeforeMb: round(before.now),
      rssAfterMb: round(after.now),
      peakRssMb: round(after.peak),
      duplicates,
      serverCpuS: round(cpu.all, 2),
      serverMainThreadCpuS: round(cpu.loop, 2),
      receiversEventLoopUse: round(receiversBusy, 2),
      receiverConnections: receivers.connections(),
    }
    console.log(
      `fanout: ${CHANNELS} webhooks, last delivery ${result.lastDeliveryS} s after the PATCH answered (${result.deliveriesPerS}/s); RSS ${result.rssBeforeMb} → ${result.rssAfterMb} MB (peak ${result.peakRssMb}); server CPU ${result.serverCpuS} s (main thread ${result.serverMainThreadCpuS} s), receivers' event loop ${Math.round(result.receiversEventLoopUse * 100)} % busy, ${result.receiverConnections} connections`,
    )
    return result
  } finally {
    await stopServer(server)
    await receivers.close()
    rmSync(w.dir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------
// (c) crash

async function crash(): Promise<NotifyResult['crash']> {
  const receivers = await startReceivers(CHANNELS)
  const w = await world(1)
  const statusId = w.statusIds[0] as string
  const { origins } = receivers
  addSubscribers(w.file, statusId, CHANNELS, (i) => `${origins[i % origins.length]}/c/${i}`)
  const port = takePort()
  let server = await serve(w, port)
  try {
    await sleep(2000)
    await patch(port, w, statusId, 'CHANGED')
    await withTimeout(receivers.until(Math.floor(CHANNELS / 3)), 600_000, 'first third')
    server.kill('SIGKILL')
    await new Promise((r) => server.once('exit', r))
    const atKill = receivers.reached()
    console.log(`crash: SIGKILL with ${atKill} of ${CHANNELS} channels delivered`)
    const restarted = performance.now()
    server = await serve(w, port)
    await withTimeout(receivers.until(CHANNELS), 900_000, 'delivery after the restart')
    const lastS = (receivers.lastFirstAt() - restarted) / 1000
    // late copies of what the killed server had under way come once its leases run out: wait
    // until no delivery is pending any more, then a moment for the last answers
    const settled = performance.now()
    while (pendingDeliveries(w.file) > 0 && performance.now() - settled < 300_000) await sleep(500)
    await sleep(1000)
    const distinct = receivers.ids.map((seen) => new Set(seen).size)
    const result = {
      channels: CHANNELS,
      deliveredBeforeKill: atKill,
      delivered: distinct.filter((n) => n >= 1).length,
      channelsWithTwoIds: distinct.filter((n) => n > 1).length,
      sameIdAgain: receivers.ids.reduce((n, seen) => n + seen.length - new Set(seen).size, 0),
      restartToLastS: round(lastS, 1),
    }
    console.log(
      `crash: after the restart every channel had it: ${result.delivered}/${CHANNELS}; two different ids: ${result.channelsWithTwoIds}; the same id again: ${result.sameIdAgain}; last ${result.restartToLastS} s after the restart`,
    )
    return result
  } finally {
    await stopServer(server)
    await receivers.close()
    rmSync(w.dir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------

try {
  execFileSync('wrk', ['--version'], { stdio: 'ignore' })
} catch (err) {
  if ((err as { code?: string }).code === 'ENOENT' && PART !== 'fanout' && PART !== 'crash') {
    console.error('bench: wrk is not installed (Debian: apt-get install -y wrk)')
    process.exit(2)
  }
}

const result: NotifyResult = {
  ...runInfo(
    ROOT,
    `npm run bench:notify -- --part ${PART} --rules ${RULES} --channels ${CHANNELS} --rounds ${ROUNDS} --duration ${DURATION} --connections ${CONNECTIONS}`,
    'statusd serve (SQLite, WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8), a database per part seeded with rows as statusd writes them. (a) wrk PATCHes (durable) a public status with `rules` rules {"when":"any"} (their users have no channel) and one with none, interleaved rounds after a 2 s warm-up each, waiting between rounds until the worker fanned out every event; medians. (b) `channels` users each with one standard webhook channel to loopback receivers in this process and a rule on one public status; one PATCH; time from its response to the last channel\'s first delivery; server RSS before/after and peak. (c) as (b), SIGKILL once a third is delivered, restart on the same database; every channel counted by webhook-id.',
  ),
  kind: 'notify',
  loadAverage: { before: loadavg().map((x) => round(x, 2)), after: [] },
  params: {
    rules: RULES,
    channels: CHANNELS,
    rounds: ROUNDS,
    durationS: DURATION,
    connections: CONNECTIONS,
  },
  writers: null,
  fanout: null,
  crash: null,
}
if (PART === 'all' || PART === 'writers') result.writers = await writers()
if (PART === 'all' || PART === 'fanout') result.fanout = await fanout()
if (PART === 'all' || PART === 'crash') result.crash = await crash()
if (result.loadAverage) result.loadAverage.after = loadavg().map((x) => round(x, 2))
console.log(JSON.stringify(result, null, 2))
if (!values['no-write']) writeResult(result)
