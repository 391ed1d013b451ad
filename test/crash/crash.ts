/**
 * Crash safety: drives write load against a real `statusd serve` process, SIGKILLs it at a
 * random moment (after a seeded number of acknowledged writes, so a seed replays the kill
 * point: TEST_SEED=…), starts it again on the same storage, and checks that every acknowledged
 * write is there — its value, its change number, its history row — and that storage is
 * intact. Unacknowledged writes sent with an Idempotency-Key are retried after the restart
 * and must land exactly once. Every acknowledged write has its notification recorded (its
 * `status.changed` outbox event, committed in the write's transaction), and after the last
 * restart a webhook receiver gets every recorded event, each change under one event id.
 *
 *   npm run test:crash                  50 rounds on SQLite (CRASH_ROUNDS to change)
 *   TEST_DATABASE_URL=postgres://… npm run test:crash    PostgreSQL too, when this tree has it
 *
 * test/crash/crash.test.ts runs a few rounds of it inside `npm test`.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { createDatabase } from '../../src/db/create-database.ts'
import type { Database } from '../../src/db/engine.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { DEFAULT_PLANS, type Plans } from '../../src/modules/plans/plans.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { type Lifetime, scriptLifetime } from '../helpers/cleanup.ts'
import { TEST_DATABASE_URL, testDatabase } from '../helpers/engine.ts'
import { type Server, startServer } from '../helpers/processes.ts'
import { type Random, random, runSeed } from '../helpers/seed.ts'
import { waitUntil } from '../helpers/sse.ts'
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts'

/** Where a crash run keeps its data: an engine and a DATABASE_URL. */
export interface CrashTarget {
  engine: 'sqlite' | 'postgres'
  databaseUrl: string
}

export interface CrashOptions {
  /** What the servers live as long as (a test's context). */
  t: Lifetime
  rounds: number
  target: CrashTarget
  /** Where the load and the kill points come from (a seeded generator). */
  random: Random
  /** Writes running at once against the server. */
  workers?: number
  /** Progress lines; default silent. */
  log?: (line: string) => void
  /** JSON lines of every acknowledged write, for the record. */
  ackLogFile?: string
  /**
   * Also notify: a webhook channel (every status has an `any` rule either way), and after the
   * last restart every recorded event must reach the receiver (default true).
   */
  notify?: boolean
}

export interface CrashReport {
  rounds: number
  acknowledged: number
  unacknowledged: number
  retriedAfterRestart: number
  statuses: number
  historyRows: number
  /** Events the webhook receiver got after the last restart (0 without `notify`). */
  delivered: number
}

/** One write the server acknowledged (2xx): what must survive the crash. */
interface Ack {
  round: number
  statusKey: string
  statusId: string
  value: string
  changeCount: number
  replayed: boolean
}

/** A write that got no answer, sent with an Idempotency-Key: retried after the restart. */
interface Pending {
  method: 'POST' | 'PATCH'
  url: string
  body: { value: string }
  idempotencyKey: string
  statusKey: string
}

const STATUS_KEYS = Array.from({ length: 8 }, (_, i) => `crash-${i}`)
const PLANS: Plans = {
  ...DEFAULT_PLANS,
  unlimited: {
    descriptionLinks: true,
    accessSettings: true,
    maxStatuses: null,
    requestsPerMinute: null,
    historyDays: null,
  },
}
/** Upper bounds of one round: a bound on the load, never a timing assertion. */
const MAX_REQUESTS_PER_ROUND = 5000
/** A round's kill comes after 1 to this many acknowledged writes (writes are in flight then). */
const MAX_ACKS_BEFORE_KILL = 400
const REQUEST_TIMEOUT_MS = 15_000

/** Throws when storage breaks a promise; the message names what and where. */
function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`crash check failed: ${what}`)
}

/** The engine's integrity check; SQLite's `integrity_check` and `foreign_key_check`. */
async function integrity(database: Database): Promise<void> {
  if (database.engine !== 'sqlite') return // note: PostgreSQL has no cheap whole-database check
  const rows = (await sql<{ integrity_check: string }>`pragma integrity_check`.execute(database.db))
    .rows
  check(
    rows.length === 1 && rows[0]?.integrity_check === 'ok',
    `integrity_check: ${JSON.stringify(rows)}`,
  )
  const fk = (await sql`pragma foreign_key_check`.execute(database.db)).rows
  check(fk.length === 0, `foreign_key_check: ${JSON.stringify(fk)}`)
}

/**
 * Checks storage against everything acknowledged so far: each ack's history row (same change
 * number, same value), change counters never behind an ack, history numbered 1..changeCount
 * without gaps or duplicates, the current value the last history row's, no value applied twice.
 * And what notifications need (docs/notifications.md#rules): each value update its
 * `status.changed` outbox event, committed with it — one per change number, with the value
 * of that change — so an acknowledged write's notification survives the kill.
 */
async function verify(
  target: CrashTarget,
  userId: string,
  acks: Ack[],
): Promise<{ statuses: number; historyRows: number }> {
  const database = createDatabase(target.databaseUrl)
  try {
    await integrity(database)
    const statuses = await database.db
      .selectFrom('statuses')
      .selectAll()
      .where('owner_id', '=', userId)
      .execute()
    const byId = new Map(statuses.map((s) => [s.id, s]))
    const history = await database.db
      .selectFrom('status_history')
      .selectAll()
      .where('status_id', 'in', statuses.length > 0 ? statuses.map((s) => s.id) : ['-none-'])
      .execute()
    const rows = new Map<string, string>()
    const seenValues = new Set<string>()
    for (const h of history) {
      const id = `${h.status_id}#${Number(h.change_no)}`
      check(!rows.has(id), `one history row per change number (${id})`)
      rows.set(id, h.value)
      check(!seenValues.has(h.value), `value ${h.value} applied once, not twice`)
      seenValues.add(h.value)
    }
    for (const s of statuses) {
      const count = Number(s.change_count)
      for (let n = 1; n <= count; n++)
        check(rows.has(`${s.id}#${n}`), `status ${s.status_key} has history row ${n} of ${count}`)
      check(
        history.filter((h) => h.status_id === s.id).length === count,
        `status ${s.status_key}: exactly ${count} history rows`,
      )
      if (count > 0)
        check(
          rows.get(`${s.id}#${count}`) === s.value,
          `status ${s.status_key}: its value is its last history row's`,
        )
    }
    const events = await database.db
      .selectFrom('outbox_events')
      .select(['id', 'status_id', 'payload'])
      .where('type', '=', 'status.changed')
      .where('status_id', 'in', statuses.length > 0 ? statuses.map((s) => s.id) : ['-none-'])
      .execute()
    const eventOf = new Map<string, string>()
    for (const e of events) {
      const { status } = JSON.parse(e.payload) as {
        status: { id: string; value: string; changeCount: number }
      }
      const id = `${e.status_id}#${status.changeCount}`
      check(status.id === e.status_id, `event ${e.id} is about its status`)
      check(!eventOf.has(id), `one status.changed event per change number (${id})`)
      eventOf.set(id, status.value)
      check(rows.get(id) === status.value, `event ${e.id} carries change ${id}'s value`)
    }
    check(
      events.length === history.length,
      `one status.changed event per history row (${events.length} events, ${history.length} rows)`,
    )
    for (const ack of acks) {
      check(
        eventOf.get(`${ack.statusId}#${ack.changeCount}`) === ack.value,
        `status ${ack.statusKey}: change ${ack.changeCount} ("${ack.value}") has its status.changed event`,
      )
      const status = byId.get(ack.statusId)
      check(status !== undefined, `acknowledged status ${ack.statusKey} (${ack.statusId}) exists`)
      check(
        Number(status?.change_count) >= ack.changeCount,
        `status ${ack.statusKey}: change count ${status?.change_count} ≥ acknowledged ${ack.changeCount}`,
      )
      check(
        rows.get(`${ack.statusId}#${ack.changeCount}`) === ack.value,
        `status ${ack.statusKey}: change ${ack.changeCount} is the acknowledged "${ack.value}" (found "${rows.get(`${ack.statusId}#${ack.changeCount}`)}")`,
      )
    }
    return { statuses: statuses.length, historyRows: history.length }
  } finally {
    await database.close()
  }
}

/** How long the last server may take to deliver what the crashes left (a bound, not a timing). */
const DELIVERY_WAIT_MS = 180_000

/**
 * After the last restart, every `status.changed` event storage holds reaches the webhook
 * receiver (docs/notifications.md#delivery): delivery is at least once, so an event may
 * arrive more than once after a kill, but always under its one id, and no change arrives
 * under two ids.
 */
async function verifyDelivered(
  target: CrashTarget,
  userId: string,
  receiver: WebhookReceiver,
): Promise<number> {
  const database = createDatabase(target.databaseUrl)
  try {
    const events = await database.db
      .selectFrom('outbox_events as e')
      .innerJoin('statuses as s', 's.id', 'e.status_id')
      .select(['e.id', 'e.payload'])
      .where('e.type', '=', 'status.changed')
      .where('s.owner_id', '=', userId)
      .execute()
    const expected = new Map(events.map((e) => [e.id, JSON.parse(e.payload)]))
    const received = () => new Set(receiver.requests.map((r) => String(r.headers['webhook-id'])))
    await waitUntil(
      () => [...expected.keys()].every((id) => received().has(id)),
      `the receiver has all ${expected.size} events`,
      DELIVERY_WAIT_MS,
    )
    const idOfChange = new Map<string, string>()
    for (const request of receiver.requests) {
      const id = String(request.headers['webhook-id'])
      const body = JSON.parse(request.body) as {
        id: string
        type: string
        status: { id: string; value: string; changeCount: number }
      }
      const recorded = expected.get(id)
      check(recorded !== undefined, `delivered ${id} is an event storage holds`)
      check(body.id === id, `the body's id is the webhook-id (${id})`)
      check(
        body.type === 'status.changed' && body.status.value === recorded.status.value,
        `${id} carries its change's value`,
      )
      const change = `${body.status.id}#${body.status.changeCount}`
      check(
        (idOfChange.get(change) ?? id) === id,
        `change ${change} arrives under one id (${idOfChange.get(change)}, ${id})`,
      )
      idOfChange.set(change, id)
    }
    return expected.size
  } finally {
    await database.close()
  }
}

/** The user's statuses as storage holds them. */
async function storedStatuses(target: CrashTarget, userId: string) {
  const database = createDatabase(target.databaseUrl)
  try {
    const rows = await database.db
      .selectFrom('statuses')
      .select(['id', 'value', 'change_count'])
      .where('owner_id', '=', userId)
      .execute()
    return rows.map((r) => ({ id: r.id, value: r.value, changeCount: Number(r.change_count) }))
  } finally {
    await database.close()
  }
}

/** A user on an unlimited plan, so rate limits never refuse the load. */
async function makeUser(target: CrashTarget): Promise<{ userId: string; key: string }> {
  const database = createDatabase(target.databaseUrl)
  try {
    await migrateToLatest(database.db)
    const user = await createUser(database.db, PLANS, {
      name: 'crash test',
      plan: 'unlimited',
      verified: true,
    })
    const key = await createApiKey(database.db, user.id, { label: 'crash test' })
    return { userId: user.id, key: key.key }
  } finally {
    await database.close()
  }
}

/** Runs `rounds` rounds of load → SIGKILL → verify → restart. Throws on the first broken promise. */
export async function runCrash(options: CrashOptions): Promise<CrashReport> {
  const { t, rounds, target, random, workers = 6, log = () => {}, notify = true } = options
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-crash-'))
  const plansFile = path.join(dir, 'plans.json')
  fs.writeFileSync(plansFile, JSON.stringify(PLANS))
  const { userId, key } = await makeUser(target)
  const receiver = notify ? await startReceiver(t) : null
  // webhooks to the loopback receiver (docs/notifications.md#outbound-safety)
  const serverEnv = {
    PLANS_FILE: plansFile,
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
  }
  // values are unique across the run
  const run = random.int(0, 36 ** 3).toString(36)
  let counter = 0
  const nextValue = () => `${run}${(counter++).toString(36)}`
  const acks: Ack[] = []
  const ids = new Map<string, string>()
  let pending: Pending[] = []
  let unacknowledged = 0
  let retried = 0
  const ackLog = options.ackLogFile ? fs.openSync(options.ackLogFile, 'a') : null
  const acknowledge = (ack: Ack) => {
    acks.push(ack)
    ids.set(ack.statusKey, ack.statusId)
    if (ackLog !== null) fs.writeSync(ackLog, `${JSON.stringify(ack)}\n`)
  }

  const send = async (
    server: Server,
    p: Omit<Pending, 'idempotencyKey'> & { idempotencyKey?: string },
  ) => {
    const res = await fetch(`${server.url}${p.url}`, {
      method: p.method,
      headers: {
        'service-api-key': key,
        'content-type': 'application/json',
        ...(p.idempotencyKey && { 'idempotency-key': p.idempotencyKey }),
      },
      body: JSON.stringify(p.body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    const text = await res.text()
    return { status: res.status, text, replayed: res.headers.get('idempotent-replayed') === 'true' }
  }

  let report: { statuses: number; historyRows: number } = { statuses: 0, historyRows: 0 }
  let delivered = 0

  /**
   * The statuses made up front (no value yet), each with an `any` rule, so that every value
   * write of the load records its status.changed event (docs/notifications.md#delivery: a
   * status without a rule records none); with `notify`, a webhook channel to the receiver:
   * every value write of the load is then to be delivered.
   */
  const subscribeAll = async (server: Server, to: WebhookReceiver | null) => {
    const call = async (method: string, url: string, body: unknown) => {
      const res = await fetch(`${server.url}${url}`, {
        method,
        headers: { 'service-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      })
      const text = await res.text()
      check(res.ok, `${method} ${url}: ${res.status} ${text}`)
      return JSON.parse(text)
    }
    if (to)
      await call('POST', '/v1/user/channels', {
        type: 'webhook',
        name: 'crash receiver',
        config: { url: `${to.origin}/hook`, format: 'standard' },
      })
    for (const statusKey of STATUS_KEYS) {
      const status = await call('POST', `/v1/status-keys/${statusKey}`, { name: statusKey })
      ids.set(statusKey, status.id)
      await call('PUT', `/v1/status/${status.id}/notifications`, { when: 'any' })
    }
  }
  try {
    for (let round = 1; round <= rounds; round++) {
      const server = await startServer(t, target.databaseUrl, serverEnv)
      if (round === 1) await subscribeAll(server, receiver)
      // retry what the last crash left unanswered: each must land exactly once
      for (const p of pending) {
        const res = await send(server, p)
        check(
          res.status === 200 || res.status === 201,
          `retry of ${p.idempotencyKey}: ${res.status} ${res.text}`,
        )
        const body = JSON.parse(res.text)
        acknowledge({
          round,
          statusKey: p.statusKey,
          statusId: body.id,
          value: body.value,
          changeCount: body.changeCount,
          replayed: res.replayed,
        })
        retried += 1
      }
      pending = []

      let sent = 0
      let killed = false
      // the kill point of this round, in acknowledged writes: the seed replays it
      const killAfter = random.int(1, MAX_ACKS_BEFORE_KILL + 1)
      let acknowledgedThisRound = 0
      let kill = () => {}
      const killPoint = new Promise<void>((resolve) => {
        kill = resolve
      })
      const worker = async () => {
        while (!killed && sent < MAX_REQUESTS_PER_ROUND) {
          sent += 1
          // note: the same three draws for every request, so request n is the same for a seed
          // whichever worker sends it
          const statusKey = random.pick(STATUS_KEYS)
          const idempotent = random.int(0, 3) === 0
          const patchIfKnown = random.int(0, 4) === 0
          const id = ids.get(statusKey)
          const value = nextValue()
          const p = {
            ...(id && patchIfKnown
              ? { method: 'PATCH' as const, url: `/v1/status/${id}` }
              : { method: 'POST' as const, url: `/v1/status-keys/${statusKey}` }),
            body: { value },
            statusKey,
            ...(idempotent && { idempotencyKey: `crash-${run}-${value}` }),
          }
          try {
            const res = await send(server, p)
            check(
              res.status === 200 || res.status === 201,
              `${p.method} ${p.url}: ${res.status} ${res.text}`,
            )
            const body = JSON.parse(res.text)
            check(body.value === value, `the response carries the value sent (${value})`)
            acknowledge({
              round,
              statusKey,
              statusId: body.id,
              value,
              changeCount: body.changeCount,
              replayed: res.replayed,
            })
            acknowledgedThisRound += 1
            if (acknowledgedThisRound === killAfter) kill()
          } catch (err) {
            if (!killed) throw err
            // no answer: the server died under it; it may or may not have landed
            unacknowledged += 1
            if (p.idempotencyKey) pending.push(p as Pending)
          }
        }
      }
      const load = Promise.all(Array.from({ length: workers }, worker))
      // the random moment: the kill point's acknowledgement (the load cannot end before it)
      await Promise.race([killPoint, load])
      check(acknowledgedThisRound >= killAfter, `round ${round} reached its kill point`)
      killed = true
      server.child.kill('SIGKILL')
      const exit = await server.exited
      check(exit.signal === 'SIGKILL', `the server was killed (exit ${JSON.stringify(exit)})`)
      await load
      report = await verify(target, userId, acks)
      log(
        `round ${round}/${rounds}: killed after ${killAfter} acknowledged, ${acks.length} acknowledged so far, ${pending.length} to retry, ${report.historyRows} history rows — ok`,
      )
    }
    // a last start: the server comes up on what the crashes left, and answers as storage says
    const server = await startServer(t, target.databaseUrl, serverEnv)
    for (const p of pending) {
      const res = await send(server, p)
      check(res.status === 200 || res.status === 201, `final retry: ${res.status} ${res.text}`)
      const body = JSON.parse(res.text)
      acknowledge({
        round: rounds + 1,
        statusKey: p.statusKey,
        statusId: body.id,
        value: body.value,
        changeCount: body.changeCount,
        replayed: res.replayed,
      })
      retried += 1
    }
    const list = await fetch(`${server.url}/v1/user/status`, {
      headers: { 'service-api-key': key },
    })
    check(list.status === 200, 'the restarted server lists the statuses')
    // the server answers what storage holds: each status's value and change count
    const stored = await storedStatuses(target, userId)
    const listed = (await list.json()) as { statusId: string }[]
    check(listed.length === stored.length, `the list has all ${stored.length} statuses`)
    for (const row of stored) {
      const res = await fetch(`${server.url}/v1/status/${row.id}`, {
        headers: { 'service-api-key': key },
      })
      const body = (await res.json()) as { value: string | null; changeCount: number }
      check(
        res.status === 200 && body.value === row.value && body.changeCount === row.changeCount,
        `GET ${row.id} after the crashes answers what storage holds`,
      )
    }
    if (receiver) delivered = await verifyDelivered(target, userId, receiver)
    const exit = await server.stop('SIGTERM')
    check(exit.code === 0, 'the last server stops cleanly')
    report = await verify(target, userId, acks)
  } finally {
    if (ackLog !== null) fs.closeSync(ackLog)
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return {
    rounds,
    acknowledged: acks.length,
    unacknowledged,
    retriedAfterRestart: retried,
    ...report,
    delivered,
  }
}

/**
 * Whether this tree can run the target at all; a reason when it cannot.
 * note: PostgreSQL support comes with another branch; until then createDatabase refuses it.
 */
export async function unavailableReason(target: CrashTarget): Promise<string | null> {
  try {
    const database = createDatabase(target.databaseUrl)
    try {
      if (!(await database.ping())) return `${target.engine} does not answer`
    } finally {
      await database.close()
    }
    return null
  } catch (err) {
    return `${target.engine} is not available in this tree: ${(err as Error).message}`
  }
}

/** The engines to run on: SQLite always, PostgreSQL when TEST_DATABASE_URL names a server. */
export function crashEngines(): CrashTarget['engine'][] {
  return TEST_DATABASE_URL && /^postgres(ql)?:\/\//.test(TEST_DATABASE_URL)
    ? ['sqlite', 'postgres']
    : ['sqlite']
}

/** Fresh storage on `engine` for a run: a SQLite file in `dir`, or a schema of its own. */
export async function crashTarget(
  t: Lifetime,
  engine: CrashTarget['engine'],
  dir: string,
): Promise<CrashTarget> {
  if (engine === 'sqlite')
    return { engine, databaseUrl: `sqlite:${path.join(dir, engine, 'statusd.db')}` }
  return { engine, databaseUrl: (await testDatabase(t, 'postgres')).url }
}

if (import.meta.main) {
  const rounds = Number(process.env.CRASH_ROUNDS || 50)
  const seed = runSeed()
  console.log(`crash: seed ${seed} (TEST_SEED=${seed} replays the kill points)`)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-crash-main-'))
  const t = scriptLifetime()
  let failed = false
  try {
    for (const engine of crashEngines()) {
      const target = await crashTarget(t, engine, dir)
      const reason = await unavailableReason(target)
      if (reason) {
        console.log(`crash: skipping ${target.engine}: ${reason}`)
        continue
      }
      console.log(`crash: ${rounds} rounds on ${target.engine}`)
      const ackLogFile = path.join(os.tmpdir(), `statusd-crash-acks-${target.engine}.jsonl`)
      fs.rmSync(ackLogFile, { force: true })
      try {
        const report = await runCrash({
          t,
          rounds,
          target,
          random: random(seed),
          log: (l) => console.log(`  ${l}`),
          ackLogFile,
        })
        console.log(
          `crash: ${target.engine} ok ${JSON.stringify(report)} (acknowledged writes: ${ackLogFile})`,
        )
      } catch (err) {
        failed = true
        console.error(`crash: ${target.engine} FAILED (TEST_SEED=${seed}): ${(err as Error).stack}`)
      }
    }
  } finally {
    await t.end()
    fs.rmSync(dir, { recursive: true, force: true })
  }
  process.exitCode = failed ? 1 : 0
}
