// Account deletion bench: how long `DELETE /v1/user` takes for an account with many statuses
// and a long history, and how long other clients' writes wait meanwhile
// (docs/performance.md#deleting-an-account). Prints the figures and writes the run to
// bench/results/.
//   node bench/delete.ts [--statuses 1000] [--history 1000] [--writers 4]
//                        [--dir /tmp/statusd-delete-bench] [--server-url postgres://…/postgres]
//                        [--no-write]
//
// Method. A dataset seeded by bench/seed.ts (one user owning --statuses statuses, with
// statuses × history history rows; on SQLite a copy of the seed is used, so the seed is
// reused by the next run), given an e-mail address and a password, and a second user with
// a status for each writer. `statusd serve` runs as its own process (SQLite, or PostgreSQL
// with --server-url). --writers clients each set their own status by key, one request after
// another, for the whole run: a warm-up of 1 s, a baseline of 3 s, then the account signs in and is deleted
// (DELETE /v1/user with the password), then until the history sweep has removed every
// history row of the deleted statuses. Reported: the DELETE's answer time, the time until
// the history was gone, and the writers' latencies (p50, p99, worst) in the baseline and
// while the deletion ran (the answer and the sweep).
//
// note: the clients and the server share the machine; the times are upper bounds.
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { createDatabase } from '../src/db/create-database.ts'
import { createApiKey } from '../src/modules/keys/keys.service.ts'
import { loadPlansFile } from '../src/modules/plans/plans.ts'
import { emailKeyOf } from '../src/modules/users/email-address.ts'
import { scryptHasher } from '../src/modules/users/passwords.ts'
import { createUser } from '../src/modules/users/users.service.ts'
import { type DeleteResult, runInfo, writeResult } from './results.ts'
import { PLANS_FILE, startServer, statusdCommand, stopServer } from './rig.ts'
import { databaseOn, seedOrReuse } from './seed.ts'

const ROOT = new URL('..', import.meta.url).pathname
const { values } = parseArgs({
  options: {
    statuses: { type: 'string', default: '1000' },
    history: { type: 'string', default: '1000' },
    writers: { type: 'string', default: '4' },
    dir: { type: 'string', default: join(tmpdir(), 'statusd-delete-bench') },
    'server-url': { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
})
const statuses = Number(values.statuses)
const history = Number(values.history)
const writers = Number(values.writers)
const serverUrl = values['server-url']
const engine = serverUrl ? 'postgres' : 'sqlite'
const round = (x: number) => Math.round(x * 100) / 100
const PASSWORD = 'bench account to delete 1'
const EMAIL = 'leaving@bench.example'
const BASELINE_MS = 3_000
const WARM_UP_MS = 1_000

const loadBefore = loadavg().map(round)
const dir = join(values.dir, `${engine}-n${statuses}-h${history}`)
mkdirSync(dir, { recursive: true })
let databaseUrl: string
let userId: string
let historyRows: number
if (serverUrl) {
  // the deletion consumes the dataset: PostgreSQL is seeded afresh for each run (its
  // database dropped and made again)
  rmSync(join(dir, 'meta.json'), { force: true })
  const data = await seedOrReuse(
    {
      dir,
      statuses,
      history,
      databaseUrl: databaseOn(serverUrl, `statusd_bench_delete_${statuses}`),
      serverUrl,
    },
    'delete',
  )
  ;({ databaseUrl, userId, historyRows } = data)
} else {
  const data = await seedOrReuse({ dir, statuses, history }, 'delete')
  const run = join(dir, 'run.db')
  for (const suffix of ['', '-wal', '-shm']) rmSync(run + suffix, { force: true })
  copyFileSync(join(dir, 'seed.db'), run)
  if (existsSync(join(dir, 'seed.db-wal'))) copyFileSync(join(dir, 'seed.db-wal'), `${run}-wal`)
  databaseUrl = `sqlite:${run}`
  ;({ userId, historyRows } = data)
}

// the account to delete signs in with a password; another user writes beside it
const database = createDatabase(databaseUrl)
let writerKey: string
try {
  await database.db
    .updateTable('users')
    .set({
      email: EMAIL,
      email_key: emailKeyOf(EMAIL),
      email_verified_at: new Date().toISOString(),
      password_hash: await scryptHasher.hash(PASSWORD),
    })
    .where('id', '=', userId)
    .execute()
  const other = await createUser(database.db, loadPlansFile(PLANS_FILE), {
    name: 'bench writer',
    plan: 'unlimited',
    verified: true,
  })
  writerKey = (await createApiKey(database.db, other.id, { label: 'writer' })).key
} finally {
  await database.close()
}

const port = 20_000 + Math.floor(Math.random() * 20_000)
const server = await startServer('statusd', port, statusdCommand(port, databaseUrl))
const base = `http://127.0.0.1:${port}`
const json = { 'content-type': 'application/json' }

/** Latencies of the writers' requests, each with when it began. */
const samples: { at: number; ms: number }[] = []
let writing = true
let failures = 0
async function writer(i: number): Promise<void> {
  let n = 0
  while (writing) {
    const began = performance.now()
    const res = await fetch(`${base}/v1/status-keys/writer-${i}`, {
      method: 'POST',
      headers: { ...json, 'service-api-key': writerKey },
      body: JSON.stringify({ value: `v${n++}` }),
    })
    const text = await res.text()
    if (res.status >= 300) {
      failures += 1
      if (failures <= 3) console.error(`writer ${i}: ${res.status} ${text}`)
    }
    samples.push({ at: began, ms: performance.now() - began })
  }
}

const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
  return {
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    maxMs: round(sorted.at(-1) ?? 0),
    count: sorted.length,
  }
}

let row: DeleteResult['row']
const probe = createDatabase(databaseUrl)
try {
  const running = Array.from({ length: writers }, (_, i) => writer(i))
  // the writers' statuses made and the server warmed up before the baseline
  await sleep(WARM_UP_MS)
  const baselineFrom = performance.now()
  await sleep(BASELINE_MS)

  const login = await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { ...json, origin: base },
    body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
  })
  if (login.status !== 200) throw new Error(`sign-in answered ${login.status}`)
  await login.arrayBuffer()
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string

  const deleteFrom = performance.now()
  const res = await fetch(`${base}/v1/user`, {
    method: 'DELETE',
    headers: { ...json, cookie, origin: base },
    body: JSON.stringify({ password: PASSWORD }),
  })
  const answerMs = performance.now() - deleteFrom
  if (res.status !== 204)
    throw new Error(`DELETE /v1/user answered ${res.status}: ${await res.text()}`)
  // until the sweep has taken every history row of the deleted statuses
  for (;;) {
    const left = await probe.db
      .selectFrom('status_deletions')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow()
    if (Number(left.n) === 0) break
    await sleep(50)
  }
  const sweptMs = performance.now() - deleteFrom
  writing = false
  await Promise.all(running)
  // history rows of statuses that no longer exist
  const remaining = await probe.db
    .selectFrom('status_history')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status_id', 'not in', (eb) => eb.selectFrom('statuses').select('id'))
    .executeTakeFirstOrThrow()

  row = {
    statuses,
    historyRows,
    answerMs: round(answerMs),
    historyGoneS: round(sweptMs / 1000),
    historyRowsLeft: Number(remaining.n),
    writers,
    writerFailures: failures,
    baseline: stats(
      samples.filter((s) => s.at >= baselineFrom && s.at < deleteFrom).map((s) => s.ms),
    ),
    duringDelete: stats(samples.filter((s) => s.at >= deleteFrom).map((s) => s.ms)),
  }
  console.error('delete:', JSON.stringify(row))
} finally {
  writing = false
  await probe.close()
  await stopServer(server)
}

const result: DeleteResult = {
  ...runInfo(
    ROOT,
    `npm run bench:delete -- --statuses ${statuses} --history ${history} --writers ${writers}${serverUrl ? ' --server-url …' : ''}`,
    `statusd serve (${engine}) on a seeded dataset: one account owning the statuses and every history row, deleted with DELETE /v1/user (password, from a session) while ${writers} clients of another user set their own statuses by key, one request after another; the DELETE's answer time, the time until the history sweep removed every history row, and the writers' latencies in a ${BASELINE_MS / 1000} s baseline before and from the DELETE until the sweep ended`,
  ),
  kind: 'delete',
  loadAverage: { before: loadBefore, after: loadavg().map(round) },
  params: { engine, history, writers },
  row,
}
console.log(JSON.stringify(result, null, 2))
if (!values['no-write']) writeResult(result)
