// Fan-out bench: N concurrent SSE subscribers of one public status on one
// instance; after each PATCH, how long until every subscriber has the new value, measured
// from the PATCH response. Prints p50/p99/max and writes the run to bench/results/.
//   node bench/fanout.ts [--subscribers 10000] [--updates 5] [--no-write] [--server DIR]
//
// Method. statusd runs as its own process (`statusd serve`, SQLite); the subscribers are
// raw TCP connections in this process, each a `GET /v1/share/:shareId/events`. After each
// PATCH the clock starts when the PATCH response arrives here (fetch resolves, headers and
// status read). A subscriber's time is taken when its socket has delivered the whole SSE
// event (through the blank line that ends it) and that event's data carries the new value:
// the response is de-chunked, events are split on "\n\n", and the `"value":"…"` of each
// `event: status` is compared. A subscriber that has not got it within 10 s counts as
// missing. 500 ms pass between updates.
//
// note: the subscribers share the machine with the server (on 2 cores, one core each at
// best), so the client's own work is part of every figure: an upper bound on the server's
// delivery time. To keep that part small the client reads with `net.connect({ onread })`
// (one reused buffer, no stream machinery, no http parser) and looks only at what it must.
// It prints its own event-loop utilisation during each update: near 100 % means the client,
// not the server, was the bottleneck. `--server DIR` runs another checkout's statusd against
// the same client (for before/after comparisons).
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { type FanoutResult, runInfo, writeResult } from './results.ts'
import { startFlags } from './rig.ts'
import { seed } from './seed.ts'

const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '10000' },
    updates: { type: 'string', default: '5' },
    'no-write': { type: 'boolean', default: false },
    server: { type: 'string' },
  },
})
const N = Number(values.subscribers)
const UPDATES = Number(values.updates)
const ROOT = new URL('..', import.meta.url).pathname
const SERVER_ROOT = values.server ? resolve(values.server) : ROOT
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

const VALUE_KEY = '"value":"'
/** One read buffer for every subscriber: `onread` hands each read over before the next one. */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024)

/**
 * One subscriber on a raw socket: parses the response head, the chunked framing and the
 * event stream, and reports the value of every complete `event: status` with its arrival time.
 */
class Subscriber {
  readonly socket: Socket
  #head = '' // the response head while it is incomplete
  #headDone = false
  #chunkLeft = 0 // bytes of the current HTTP chunk still to come (its data, then CRLF)
  #sizeLine = '' // a chunk-size line split across reads
  #body = '' // event-stream text not yet ending in a blank line
  #onValue: (value: string, at: number) => void
  #onError: (err: Error) => void

  constructor(
    shareId: string,
    onValue: (value: string, at: number) => void,
    onError: (err: Error) => void,
  ) {
    this.#onValue = onValue
    this.#onError = onError
    this.socket = connect({
      host: '127.0.0.1',
      port: PORT,
      onread: { buffer: READ_BUFFER, callback: (n) => this.#read(n) },
    })
    this.socket.setNoDelay(true)
    this.socket.on('error', onError)
    this.socket.write(
      `GET /v1/share/${shareId}/events HTTP/1.1\r\nhost: 127.0.0.1:${PORT}\r\naccept: text/event-stream\r\n\r\n`,
    )
  }

  #read(n: number): boolean {
    // note: latin1 maps bytes to characters one to one, so offsets and chunk sizes stay in
    // bytes; the markers looked for are ASCII
    let text = READ_BUFFER.toString('latin1', 0, n)
    if (!this.#headDone) {
      this.#head += text
      const end = this.#head.indexOf('\r\n\r\n')
      if (end < 0) return true
      if (!this.#head.startsWith('HTTP/1.1 200')) {
        this.#onError(new Error(`subscribe: ${this.#head.slice(0, this.#head.indexOf('\r\n'))}`))
        return false
      }
      if (!/\r\ntransfer-encoding: chunked\r\n/i.test(this.#head))
        this.#onError(new Error('subscribe: expected a chunked response'))
      this.#headDone = true
      text = this.#head.slice(end + 4)
      this.#head = ''
    }
    this.#dechunk(text)
    return true
  }

  /** Strips the HTTP/1.1 chunk framing and feeds the event-stream text on. */
  #dechunk(text: string): void {
    let at = 0
    while (at < text.length) {
      if (this.#chunkLeft === 0) {
        const line = this.#sizeLine + text.slice(at)
        const eol = line.indexOf('\r\n')
        if (eol < 0) {
          this.#sizeLine = line
          return
        }
        const size = Number.parseInt(line.slice(0, eol), 16)
        at += eol + 2 - this.#sizeLine.length
        this.#sizeLine = ''
        this.#chunkLeft = size + 2 // the data and its CRLF
        if (size === 0) return // the last chunk: the server ended the stream
        continue
      }
      const take = Math.min(this.#chunkLeft, text.length - at)
      // the chunk's trailing CRLF is not event-stream text
      const dataEnd = Math.min(at + take, at + this.#chunkLeft - 2)
      if (dataEnd > at) this.#events(text.slice(at, dataEnd))
      this.#chunkLeft -= take
      at += take
    }
  }

  /** Splits event-stream text into events; reports the value of each `status` event. */
  #events(text: string): void {
    let body = this.#body === '' ? text : this.#body + text
    let end = body.indexOf('\n\n')
    while (end >= 0) {
      const arrived = performance.now()
      if (body.startsWith('event: status\n')) {
        const key = body.indexOf(VALUE_KEY)
        if (key >= 0 && key < end) {
          const from = key + VALUE_KEY.length
          this.#onValue(body.slice(from, body.indexOf('"', from)), arrived)
        }
      }
      body = body.slice(end + 2)
      end = body.indexOf('\n\n')
    }
    this.#body = body
  }
}

/** Opens N subscribers, in batches; resolves when each has its first event (the current state). */
async function subscribeAll(
  shareId: string,
  onValue: (value: string, at: number) => void,
): Promise<Subscriber[]> {
  const subscribers: Subscriber[] = []
  const firstSeen = new WeakSet<Subscriber>()
  let waiting = 0
  let wake: (() => void) | undefined
  let failure: Error | undefined
  for (let i = 0; i < N; i += 500) {
    const batch = Math.min(500, N - i)
    waiting += batch
    for (let j = 0; j < batch; j++) {
      const s: Subscriber = new Subscriber(
        shareId,
        (value, at) => {
          if (!firstSeen.has(s)) {
            firstSeen.add(s)
            waiting--
            if (waiting === 0) wake?.()
          }
          onValue(value, at)
        },
        (err) => {
          failure ??= err
          wake?.()
        },
      )
      subscribers.push(s)
    }
    await new Promise<void>((r) => {
      wake = r
      if (waiting === 0 || failure) r()
    })
    if (failure) throw failure
  }
  return subscribers
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'statusd-fanout-'))
  let server: ChildProcess | undefined
  try {
    const data = await seed({ dir, statuses: 0, history: 0 })
    server = spawn(
      process.execPath,
      [...startFlags(SERVER_ROOT), join(SERVER_ROOT, 'bin/statusd.js'), 'serve'],
      {
        env: {
          ...process.env,
          PORT: String(PORT),
          HOST: '127.0.0.1',
          DATABASE_URL: data.databaseUrl,
          PLANS_FILE: join(ROOT, 'bench/plans.json'),
          LOG_LEVEL: 'warn',
          // every subscriber connects from this one address: lift the per-client stream cap
          STREAMS_PER_CLIENT: String(N + 100),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    )
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
    const opened = performance.now()
    const subscribers = await subscribeAll(status.shareId, onValue)
    console.error(
      `fanout: ${N} subscribers connected in ${((performance.now() - opened) / 1000).toFixed(1)} s`,
    )

    const latencies: number[] = []
    let missing = 0
    for (let u = 1; u <= UPDATES; u++) {
      const value = `v${u}`
      const elu = performance.eventLoopUtilization()
      const res = await fetch(`${BASE}/v1/status/${status.id}`, {
        method: 'PATCH',
        headers,
        body: JSON.stringify({ value }),
      })
      const answered = performance.now()
      if (res.status !== 200) throw new Error(`PATCH: HTTP ${res.status}`)
      await res.arrayBuffer()
      const deadline = answered + 10_000
      while ((arrivals.get(value)?.length ?? 0) < N && performance.now() < deadline)
        await new Promise((r) => setTimeout(r, 5))
      const busy = performance.eventLoopUtilization(elu).utilization
      const got = arrivals.get(value) ?? []
      missing += N - got.length
      const lat = got.map((at) => Math.max(0, at - answered))
      latencies.push(...lat)
      console.error(
        `fanout: update ${u}: ${got.length}/${N} delivered, p50 ${percentile(lat, 50).toFixed(1)} ms, p99 ${percentile(lat, 99).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms (client busy ${(busy * 100).toFixed(0)} %)`,
      )
      await new Promise((r) => setTimeout(r, 500))
    }
    for (const s of subscribers) s.socket.destroy()
    const round1 = (n: number) => Number(n.toFixed(1))
    const result: FanoutResult = {
      ...runInfo(
        SERVER_ROOT,
        `npm run bench:fanout -- --subscribers ${N} --updates ${UPDATES}`,
        `${N} SSE subscribers of one public status on one instance; after each of ${UPDATES} PATCHes, delivery measured from the PATCH response`,
      ),
      kind: 'fanout',
      engine: 'sqlite',
      params: { subscribers: N, updates: UPDATES },
      p50Ms: round1(percentile(latencies, 50)),
      p99Ms: round1(percentile(latencies, 99)),
      maxMs: round1(Math.max(...latencies)),
      missing,
    }
    process.stdout.write(
      `fan-out, ${N} subscribers, ${UPDATES} updates: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, max ${result.maxMs} ms; ${missing} deliveries missing\n`,
    )
    // note: a run against another checkout (--server) is a comparison, not a result of this one
    if (!values['no-write'] && !values.server) writeResult(result)
  } finally {
    server?.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
process.exit(0)
