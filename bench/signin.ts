// Sign-in bench: password sign-ins under a modest concurrent load, the hash's own cost, and
// the latency of a cheap authenticated request while sign-ins run beside it. Prints the
// figures and writes the run to bench/results/.
//   node bench/signin.ts [--concurrency 4] [--duration 10] [--no-write]
//
// Method. statusd runs as its own process (`statusd serve`, SQLite, SIGNUP=open, the
// anonymous limit raised out of the way). A few accounts sign up first. Then, for
// `--duration` seconds, a cheap authenticated request (GET /v1/user with a session cookie)
// runs alone, one at a time, and its latencies are kept; then again for as long while
// `--concurrency` loops sign in with e-mail and password (POST /v1/auth/login) without
// pause. Scrypt runs on the hash pool's threads, so the cheap request's p99 beside the
// sign-ins shows whether a sign-in holds up the event loop. The hash's cost alone is measured
// in this process (verifyPassword, one at a time).
//
// note: the client shares the machine with the server; on 2 cores the sign-ins' hashing takes
// most of the CPU, and the figures are upper bounds.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { hashPassword, SCRYPT_PARAMS, verifyPassword } from '../src/modules/users/passwords.ts'
import { runInfo, type SigninResult, writeResult } from './results.ts'
import { startServer, statusdCommand } from './rig.ts'

const ROOT = new URL('..', import.meta.url).pathname
const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '4' },
    duration: { type: 'string', default: '10' },
    'no-write': { type: 'boolean', default: false },
  },
})
const concurrency = Number(values.concurrency)
const durationS = Number(values.duration)
const PASSWORD = 'bench passphrase 2026'

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number)
const round = (ms: number) => Math.round(ms * 100) / 100
const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: round(quantile(sorted, 0.5)), p99: round(quantile(sorted, 0.99)) }
}

// the hash alone, in this process
const stored = await hashPassword(PASSWORD)
await verifyPassword(stored, PASSWORD)
const hashSamples: number[] = []
for (let i = 0; i < 30; i++) {
  const start = performance.now()
  await verifyPassword(stored, PASSWORD)
  hashSamples.push(performance.now() - start)
}
const hash = stats(hashSamples)
console.error(`bench: one scrypt verification alone: p50 ${hash.p50} ms, p99 ${hash.p99} ms`)

const dir = mkdtempSync(join(tmpdir(), 'statusd-bench-signin-'))
const port = 20_000 + Math.floor(Math.random() * 20_000)
const command = statusdCommand(port, `sqlite:${join(dir, 'statusd.db')}`)
command.env.SIGNUP = 'open'
command.env.ANON_REQUESTS_PER_MINUTE = '100000000'
const server = await startServer('statusd', port, command)
const base = `http://127.0.0.1:${port}`
let errors = 0

try {
  const json = { 'content-type': 'application/json', origin: base }
  const accounts = Math.max(concurrency, 4)
  let cookie = ''
  for (let i = 0; i < accounts; i++) {
    const res = await fetch(`${base}/v1/auth/signup`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        email: `bench${i}@example.com`,
        name: `Bench ${i}`,
        password: PASSWORD,
      }),
    })
    if (res.status !== 201) throw new Error(`sign-up answered ${res.status}: ${await res.text()}`)
    cookie ||= (res.headers.getSetCookie()[0] ?? '').split(';')[0] as string
  }

  const cheapLoop = async (until: number, samples: number[]) => {
    while (performance.now() < until) {
      const start = performance.now()
      const res = await fetch(`${base}/v1/user`, { headers: { cookie } })
      await res.arrayBuffer()
      samples.push(performance.now() - start)
      if (res.status !== 200) errors += 1
    }
  }
  const signInLoop = async (n: number, until: number, samples: number[]) => {
    const body = JSON.stringify({ email: `bench${n}@example.com`, password: PASSWORD })
    while (performance.now() < until) {
      const start = performance.now()
      const res = await fetch(`${base}/v1/auth/login`, { method: 'POST', headers: json, body })
      await res.arrayBuffer()
      samples.push(performance.now() - start)
      if (res.status !== 200) errors += 1
    }
  }

  // warm-up: the routes' schemas compile on first use
  await cheapLoop(performance.now() + 1_000, [])
  await signInLoop(0, performance.now() + 1_000, [])

  const alone: number[] = []
  await cheapLoop(performance.now() + durationS * 1000, alone)

  const during: number[] = []
  const signIns: number[] = []
  const until = performance.now() + durationS * 1000
  await Promise.all([
    cheapLoop(until, during),
    ...Array.from({ length: concurrency }, (_, n) => signInLoop(n, until, signIns)),
  ])

  const aloneStats = stats(alone)
  const duringStats = stats(during)
  const signInStats = stats(signIns)
  const result: SigninResult = {
    ...runInfo(
      ROOT,
      `npm run bench:signin -- --concurrency ${concurrency} --duration ${durationS}`,
      'statusd serve (SQLite, SIGNUP=open); this process signs in with `concurrency` loops for `durationS` while one loop sends GET /v1/user with a session cookie; the same cheap loop alone before, for as long; the hash alone measured in this process (30 verifications)',
    ),
    kind: 'signin',
    params: {
      concurrency,
      durationS,
      accounts,
      scrypt: `N=2^${SCRYPT_PARAMS.ln}, r=${SCRYPT_PARAMS.r}, p=${SCRYPT_PARAMS.p}`,
    },
    hashMs: { ...hash, runs: hashSamples.length },
    signIn: {
      p50Ms: signInStats.p50,
      p99Ms: signInStats.p99,
      perS: round(signIns.length / durationS),
      count: signIns.length,
    },
    cheap: {
      aloneP50Ms: aloneStats.p50,
      aloneP99Ms: aloneStats.p99,
      duringP50Ms: duringStats.p50,
      duringP99Ms: duringStats.p99,
    },
    errors,
  }
  console.log(JSON.stringify(result, null, 2))
  if (errors > 0) console.error(`bench: ${errors} errors: not a result`)
  else if (!values['no-write']) writeResult(result)
} finally {
  server.kill('SIGTERM')
  await new Promise((resolve) => server.once('exit', resolve))
  rmSync(dir, { recursive: true, force: true })
}
