// Fan-out bench (issue 5): N concurrent SSE subscribers of one public status on one
// instance; after each PATCH, how long until every subscriber has the new value, measured
// from the PATCH response. Prints p50/p99/max and appends to docs/performance.md.
//   node bench/fanout.ts [--subscribers 10000] [--updates 5] [--no-write]
// note: the subscribers live in this one process, so on a 2-core machine the client's own
// parsing is part of the figure: an upper bound on the server's delivery time.
import { type ChildProcess, spawn } from 'node:child_process'
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { seed } from './seed.ts'

const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '10000' },
    updates: { type: 'string', default: '5' },
    'no-write': { type: 'boolean', default: false },
  },
})
const N = Number(values.subscribers)
const UPDATES = Number(values.updates)
const ROOT = new URL('..', import.meta.url).pathname
const PORT = 18900 + Math.floor(Math.random() * 90)
const BASE = `http://127.0.0.1:${PORT}`

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number
}

async function waitReady(): Promise<void> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if ((await fetch(`${BASE}/readyz`).catch(() => null))?.status === 200) return
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error('statusd did not become ready')
}

/** One SSE subscriber: resolves `connected` on its first event; reports each value's arrival. */
function subscribe(agent: Agent, shareId: string, onValue: (value: string, at: number) => void) {
  return new Promise<() => void>((resolve, reject) => {
    const req = request(`${BASE}/v1/share/${shareId}/events`, { agent }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`subscribe: HTTP ${res.statusCode}`))
      res.setEncoding('utf8')
      let buffer = ''
      let first = true
      res.on('data', (chunk: string) => {
        buffer += chunk
        let end = buffer.indexOf('\n\n')
        while (end !== -1) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = frame.split('\n').find((l) => l.startsWith('data: '))
          if (frame.startsWith('event: status') && data) {
            const value = /"value":"([^"]*)"/.exec(data)?.[1] ?? ''
            onValue(value, performance.now())
            if (first) {
              first = false
              resolve(() => req.destroy())
            }
          }
          end = buffer.indexOf('\n\n')
        }
      })
    })
    req.on('error', reject)
    req.end()
  })
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'statusd-fanout-'))
  let server: ChildProcess | undefined
  try {
    const data = await seed({ dir, statuses: 0, history: 0 })
    server = spawn(process.execPath, [join(ROOT, 'bin/statusd.js'), 'serve'], {
      env: {
        ...process.env,
        PORT: String(PORT),
        HOST: '127.0.0.1',
        DATABASE_URL: data.databaseUrl,
        PLANS_FILE: join(ROOT, 'bench/plans.json'),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    await waitReady()
    const headers = { 'service-api-key': data.key, 'content-type': 'application/json' }
    const created = await fetch(`${BASE}/v1/status-keys/fanout`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ value: 'start', accessType: 'public' }),
    })
    const status = (await created.json()) as { id: string; shareId: string }

    const arrivals = new Map<string, number[]>()
    const onValue = (value: string, at: number) => {
      const list = arrivals.get(value)
      if (list) list.push(at)
      else arrivals.set(value, [at])
    }
    const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY })
    const closers: (() => void)[] = []
    const opened = performance.now()
    for (let i = 0; i < N; i += 500) {
      const batch = Array.from({ length: Math.min(500, N - i) }, () =>
        subscribe(agent, status.shareId, onValue),
      )
      closers.push(...(await Promise.all(batch)))
    }
    console.error(
      `fanout: ${N} subscribers connected in ${((performance.now() - opened) / 1000).toFixed(1)} s`,
    )

    const latencies: number[] = []
    let missing = 0
    for (let u = 1; u <= UPDATES; u++) {
      const value = `v${u}`
      const res = await fetch(`${BASE}/v1/status/${status.id}`, {
        method: 'PATCH',
        headers,
        body: JSON.stringify({ value }),
      })
      const answered = performance.now()
      if (res.status !== 200) throw new Error(`PATCH: HTTP ${res.status}`)
      const deadline = answered + 10_000
      while ((arrivals.get(value)?.length ?? 0) < N && performance.now() < deadline)
        await new Promise((r) => setTimeout(r, 5))
      const got = arrivals.get(value) ?? []
      missing += N - got.length
      const lat = got.map((at) => Math.max(0, at - answered))
      latencies.push(...lat)
      console.error(
        `fanout: update ${u}: ${got.length}/${N} delivered, p50 ${percentile(lat, 50).toFixed(1)} ms, p99 ${percentile(lat, 99).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms`,
      )
      await new Promise((r) => setTimeout(r, 500))
    }
    for (const close of closers) close()
    const line = `Fan-out (\`node bench/fanout.ts --subscribers ${N} --updates ${UPDATES}\`, ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}): ${N} SSE subscribers of one public status on one instance; after each of ${UPDATES} PATCHes, delivery measured from the PATCH response: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms; ${missing} deliveries missing.`
    process.stdout.write(`${line}\n`)
    if (!values['no-write']) appendFileSync(join(ROOT, 'docs/performance.md'), `\n${line}\n`)
  } finally {
    server?.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
process.exit(0)
