// `npm run bench:mqtt` (docs/performance.md#mqtt-bridge): the MQTT bridge against Debian's
// Mosquitto, with `statusd serve` as users run it, on a seeded SQLite file.
//
// 1. set → state: a client publishes values on `statusd/<key>/set` at `--rate` messages a
//    second for `--duration` seconds, spread over `--statuses` statuses; each value's time
//    from its publish to its `…/state` message (p50, p99), and how many arrived.
// 2. HTTP writes: `--writers` loops PATCHing statuses for `--duration` seconds, against a
//    server without the bridge, with the bridge (and a client hearing every state), and with
//    the bridge set up but its broker down.
// 3. takeover: two instances on the same database; the one that bridges is killed
//    (SIGKILL); the time from the kill to the bridge's `online` from the other.
//
// note: the client, the broker and the server share the machine; on 2 cores the figures are
// upper bounds.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import mqtt from 'mqtt'
import { type MqttResult, runInfo, writeResult } from './results.ts'
import { ROOT, startServer, statusdCommand, stopServer } from './rig.ts'
import { seed } from './seed.ts'

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    statuses: { type: 'string', default: '100' },
    duration: { type: 'string', default: '10' },
    writers: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    'no-write': { type: 'boolean', default: false },
  },
})
const rate = Number(values.rate)
const statuses = Number(values.statuses)
const durationS = Number(values.duration)
const writers = Number(values.writers)
const rounds = Number(values.rounds)

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })

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
const progress = (line: string) => process.stderr.write(`bench: ${line}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Mosquitto on a free loopback port, anonymous, without persistence. */
async function startBroker(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort()
  const conf = join(dir, 'mosquitto.conf')
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      'persistence false',
      'log_dest stderr',
      'log_type notice',
      'log_type information',
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      '',
    ].join('\n'),
  )
  const child = spawn(process.env.MOSQUITTO_BIN ?? '/usr/sbin/mosquitto', ['-c', conf], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  await new Promise<void>((resolve, reject) => {
    let output = ''
    child.stderr?.on('data', (chunk) => {
      output += chunk
      if (/ running/.test(output)) resolve()
    })
    child.once('exit', (code) => reject(new Error(`mosquitto exited with ${code}: ${output}`)))
  })
  return { url: `mqtt://127.0.0.1:${port}`, child }
}

const dir = mkdtempSync(join(tmpdir(), 'statusd-bench-mqtt-'))
const data = await seed({ dir, statuses, history: 1 })
const ids = readFileSync(data.idsFile, 'utf8').trim().split('\n')
const keys = readFileSync(data.keysFile, 'utf8').trim().split('\n')
const broker = await startBroker(dir)
const servers: ChildProcess[] = []
let errors = 0

/** statusd serve on the seeded file, bridged to `mqttUrl` (none: no bridge). */
async function serve(mqttUrl: string | null): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort()
  const command = statusdCommand(port, data.databaseUrl)
  if (mqttUrl !== null) Object.assign(command.env, { MQTT_URL: mqttUrl, MQTT_API_KEY: data.key })
  const child = await startServer('statusd', port, command)
  servers.push(child)
  return { base: `http://127.0.0.1:${port}`, child }
}

async function stop(child: ChildProcess): Promise<void> {
  await stopServer(child)
  servers.splice(servers.indexOf(child), 1)
}

/** A client of the broker that resolves `online` once the bridge says it is. */
async function client() {
  const c = await mqtt.connectAsync(broker.url)
  let onOnline: (() => void) | undefined
  c.on('message', (topic, payload) => {
    if (topic === 'statusd/bridge/state' && payload.toString() === 'online') onOnline?.()
  })
  await c.subscribeAsync('statusd/bridge/state')
  return {
    c,
    online: () =>
      new Promise<void>((resolve) => {
        onOnline = resolve
      }),
  }
}

type HttpRun = Awaited<ReturnType<typeof httpWrites>>
/** The run of the median rate. */
const medianRun = (list: HttpRun[]): HttpRun =>
  [...list].sort((a, b) => a.reqPerS - b.reqPerS)[Math.floor(list.length / 2)] as HttpRun

/** `writers` loops PATCHing their own status for `durationS`: answers a second and latencies. */
async function httpWrites(base: string) {
  const samples: number[] = []
  const loop = async (id: string, until: number) => {
    let n = 0
    while (performance.now() < until) {
      const start = performance.now()
      const res = await fetch(`${base}/v1/status/${id}`, {
        method: 'PATCH',
        headers: { 'service-api-key': data.key, 'content-type': 'application/json' },
        body: JSON.stringify({ value: `w${n++}` }),
      })
      await res.arrayBuffer()
      if (until !== Number.POSITIVE_INFINITY) samples.push(performance.now() - start)
      if (res.status !== 200) errors += 1
    }
  }
  // warm-up: the routes' schemas compile on first use
  await Promise.all(ids.slice(0, writers).map((id) => loop(id, performance.now() + 1_000)))
  samples.length = 0
  const until = performance.now() + durationS * 1000
  await Promise.all(ids.slice(0, writers).map((id) => loop(id, until)))
  return { reqPerS: Math.round(samples.length / durationS), ...stats(samples) }
}

try {
  // 1. set → state
  progress('set → state')
  const watcher = await client()
  let online = watcher.online()
  const bridged = await serve(broker.url)
  await online
  const sent = new Map<string, number>()
  const latencies: number[] = []
  watcher.c.on('message', (topic, payload) => {
    if (!topic.endsWith('/state')) return
    const at = sent.get(`${topic.slice(0, -'/state'.length)}=${payload.toString()}`)
    if (at !== undefined) latencies.push(performance.now() - at)
  })
  await watcher.c.subscribeAsync('statusd/+/state')
  const publisher = await mqtt.connectAsync(broker.url)
  const total = rate * durationS
  const tickMs = 10
  const perTick = Math.max(1, Math.round((rate * tickMs) / 1000))
  const started = performance.now()
  for (let n = 0; n < total; ) {
    for (let i = 0; i < perTick && n < total; i++, n++) {
      const key = keys[n % keys.length] as string
      const value = `m${n}`
      sent.set(`statusd/${key}=${value}`, performance.now())
      publisher.publish(`statusd/${key}/set`, value)
    }
    const next = started + (n / perTick) * tickMs
    await sleep(Math.max(0, next - performance.now()))
  }
  // what is still on its way: until nothing more arrives for a second
  for (let before = -1; before !== latencies.length; ) {
    before = latencies.length
    await sleep(1_000)
  }
  await publisher.endAsync()
  const setToState = { ...stats(latencies), sent: total, rate }

  progress('HTTP writes')
  // 2. HTTP writes: bridge on (a client hears every state), off, broker down; in rounds
  // that take turns, so that a change in the machine's load falls on all three alike
  const runs: Record<'on' | 'off' | 'brokerDown', HttpRun[]> = { on: [], off: [], brokerDown: [] }
  runs.on.push(await httpWrites(bridged.base))
  await stop(bridged.child)
  for (let round = 0; round < rounds; round++) {
    if (round > 0) {
      const again = await serve(broker.url)
      runs.on.push(await httpWrites(again.base))
      await stop(again.child)
    }
    const plain = await serve(null)
    runs.off.push(await httpWrites(plain.base))
    await stop(plain.child)
    const nowhere = await serve(`mqtt://127.0.0.1:${await freePort()}`)
    runs.brokerDown.push(await httpWrites(nowhere.base))
    await stop(nowhere.child)
  }
  const on = medianRun(runs.on)
  const off = medianRun(runs.off)
  const brokerDown = medianRun(runs.brokerDown)

  progress('takeover')
  // 3. takeover: two instances; the one that bridges is killed
  online = watcher.online()
  const first = await serve(broker.url)
  await online
  const second = await serve(broker.url)
  // the second has started; the first holds the lease
  await sleep(1_000)
  online = watcher.online()
  const killedAt = performance.now()
  first.child.kill('SIGKILL')
  await online
  const takeoverMs = Math.round(performance.now() - killedAt)
  servers.splice(servers.indexOf(first.child), 1)
  await stop(second.child)
  await watcher.c.endAsync()

  const result: MqttResult = {
    ...runInfo(
      ROOT,
      `npm run bench:mqtt -- --rate ${rate} --statuses ${statuses} --duration ${durationS} --writers ${writers} --rounds ${rounds}`,
      `Mosquitto and statusd serve on one SQLite file with ${statuses} statuses. set → state: values published on statusd/<key>/set at ${rate} a second (QoS 0) for ${durationS} s, round-robin over the statuses, each timed from its publish to its …/state message. HTTP: ${writers} loops PATCHing their own status for ${durationS} s each, in ${rounds} rounds taking turns (the median round's figures), with the bridge on (a client subscribed to every state), off, and with MQTT_URL pointing at a port where no broker listens. Takeover: two instances on the file, the bridging one killed with SIGKILL, timed to the other's "online" on statusd/bridge/state.`,
    ),
    kind: 'mqtt',
    params: { engine: 'sqlite', statuses, rate, durationS, writers, rounds },
    setToState,
    http: { on, off, brokerDown },
    takeoverMs,
    errors,
  }
  console.log(JSON.stringify(result, null, 2))
  if (errors > 0) console.error(`bench: ${errors} errors: not a result`)
  else if (!values['no-write']) writeResult(result)
} finally {
  for (const child of [...servers]) await stopServer(child)
  broker.child.kill('SIGTERM')
  rmSync(dir, { recursive: true, force: true })
}
