// Sign-in stall bench: whether password sign-ins slow the writes beside them
// (docs/security.md, "sign-ins stall writes"). Prints the figures and writes the run to
// bench/results/.
//   node bench/signin-stall.ts [--attackers 90] [--duration 10] [--no-write]
//
// Method. statusd runs as its own process (`statusd serve`, SQLite, TRUST_PROXY=1 so that a
// request names its client address in X-Forwarded-For, the anonymous limit raised out of the
// way). One keyed PATCH of a status runs alone, one at a time, for `--duration` seconds, and
// its latencies are kept; then again for as long while `--attackers` loops send
// wrong-password sign-ins (POST /v1/auth/login) without pause, each request from an address
// and for an e-mail of its own, so that no throttle stops them and every one asks for a
// password to be judged (a botnet's worst case); a loop answered 429 waits its Retry-After
// before the next one. The sign-ins' answers are counted by status.
//
// note: the client shares the machine with the server; on 2 cores the figures are upper
// bounds.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { runInfo, type StallResult, writeResult } from './results.ts'
import { startServer, statusdCommand, stopServer } from './rig.ts'
import { seed } from './seed.ts'

const ROOT = new URL('..', import.meta.url).pathname
const { values } = parseArgs({
  options: {
    attackers: { type: 'string', default: '90' },
    duration: { type: 'string', default: '10' },
    'no-write': { type: 'boolean', default: false },
  },
})
const attackers = Number(values.attackers)
const durationS = Number(values.duration)

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

const dir = mkdtempSync(join(tmpdir(), 'statusd-bench-stall-'))
const data = await seed({ dir, statuses: 0, history: 0 })
const port = 20_000 + Math.floor(Math.random() * 20_000)
const command = statusdCommand(port, data.databaseUrl)
command.env.TRUST_PROXY = '1'
command.env.ANON_REQUESTS_PER_MINUTE = '100000000'
const server = await startServer('statusd', port, command)
const base = `http://127.0.0.1:${port}`
let errors = 0

try {
  const keyed = { 'service-api-key': data.key, 'content-type': 'application/json' }
  const created = await fetch(`${base}/v1/status-keys/stall`, {
    method: 'POST',
    headers: keyed,
    body: JSON.stringify({ value: 'start' }),
  })
  if (created.status !== 201 && created.status !== 200)
    throw new Error(`creating the status answered ${created.status}: ${await created.text()}`)
  const { id } = (await created.json()) as { id: string }

  let n = 0
  const patchLoop = async (until: number, samples: number[]) => {
    while (performance.now() < until) {
      const start = performance.now()
      const res = await fetch(`${base}/v1/status/${id}`, {
        method: 'PATCH',
        headers: keyed,
        body: JSON.stringify({ value: `v${n++}` }),
      })
      await res.arrayBuffer()
      samples.push(performance.now() - start)
      if (res.status !== 200) errors += 1
    }
  }
  const answers: Record<string, number> = {}
  let address = 0
  const attackLoop = async (a: number, until: number) => {
    while (performance.now() < until) {
      const i = address++
      // a fresh address (10.x.y.z) and a fresh e-mail each time: no throttle applies
      const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
      const res = await fetch(`${base}/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base, 'x-forwarded-for': ip },
        body: JSON.stringify({ email: `guess${a}-${i}@example.com`, password: `wrong guess ${i}` }),
      })
      await res.arrayBuffer()
      answers[res.status] = (answers[res.status] ?? 0) + 1
      // told to wait, it waits (a loop that does not is a flood of requests, not of hashes)
      const wait = Number(res.headers.get('retry-after') ?? 0)
      if (res.status === 429 && wait > 0)
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(wait * 1000, until - performance.now())),
        )
    }
  }

  // warm-up: the routes' schemas compile on first use
  await patchLoop(performance.now() + 1_000, [])
  await attackLoop(0, performance.now() + 1_000)
  for (const k of Object.keys(answers)) delete answers[k]

  const alone: number[] = []
  await patchLoop(performance.now() + durationS * 1000, alone)

  const during: number[] = []
  const until = performance.now() + durationS * 1000
  await Promise.all([
    patchLoop(until, during),
    ...Array.from({ length: attackers }, (_, a) => attackLoop(a, until)),
  ])

  const result: StallResult = {
    ...runInfo(
      ROOT,
      `npm run bench:signin-stall -- --attackers ${attackers} --duration ${durationS}`,
      'statusd serve (SQLite, TRUST_PROXY=1); one loop PATCHes a status with an API key, one request at a time, for `durationS` alone, then for as long beside `attackers` loops of wrong-password sign-ins, each request from an X-Forwarded-For address and for an e-mail of its own; a loop answered 429 waits its Retry-After',
    ),
    kind: 'stall',
    params: { attackers, durationS },
    patch: { alone: stats(alone), during: stats(during) },
    signIns: answers,
    errors,
  }
  console.log(JSON.stringify(result, null, 2))
  if (errors > 0) console.error(`bench: ${errors} PATCH errors: not a result`)
  else if (!values['no-write']) writeResult(result)
} finally {
  await stopServer(server)
  rmSync(dir, { recursive: true, force: true })
}
