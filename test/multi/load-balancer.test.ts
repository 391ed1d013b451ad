import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { test } from 'node:test'
import { StatusdClient } from '../../packages/client/src/index.ts'
import { tempDir } from '../helpers/cleanup.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { type Server, start, startServer } from '../helpers/processes.ts'
import { waitUntil } from '../helpers/sse.ts'

// docs/postgres.md#behind-a-load-balancer: statusd instances behind Debian's haproxy, with the
// configuration that page explains. A client's event stream (@statusd/client's watch(), which
// reconnects with Last-Event-ID) survives its instance being stopped, by SIGTERM and then by
// SIGKILL, while a writer changes the status all along through haproxy: after each reconnect,
// which haproxy sends to another instance, the stream goes on from the database, and no
// change is missed (docs/sharing.md#live-updates-server-sent-events: every event is the state
// at its version; a client that reconnects gets the state as it is now).

const HAPROXY = '/usr/sbin/haproxy'
const haproxyMissing = spawnSync(HAPROXY, ['-v']).status === 0 ? false : 'haproxy is not installed'

type Name = 'a' | 'b' | 'c'
const NAMES: Name[] = ['a', 'b', 'c']

/** A free loopback port, for the configuration (the instances and haproxy then bind it). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * The configuration of docs/postgres.md#behind-a-load-balancer, with the health checks made
 * quicker (the test waits for them) and a header naming the instance that answered.
 */
const haproxyConfig = (port: number, servers: Record<string, number>) => `
global
  maxconn 1000

defaults
  mode http
  option forwardfor
  timeout connect 2s
  timeout client 1m
  timeout server 1m
  timeout http-request 10s
  timeout queue 5s
  retries 3
  option redispatch 1

frontend statusd
  bind 127.0.0.1:${port}
  default_backend statusd

backend statusd
  balance leastconn
  option httpchk GET /readyz
  http-check expect status 200
  default-server check inter 250ms fall 1 rise 1
  http-response set-header X-Served-By %[srv_name]
${Object.entries(servers)
  .map(([name, p]) => `  server ${name} 127.0.0.1:${p}`)
  .join('\n')}
`

test('behind haproxy: an event stream survives its instance being stopped, nothing missed', {
  skip: postgresOnly || haproxyMissing,
}, async (t) => {
  const fresh = await testDatabase(t)
  // three instances: the stream's is stopped twice (SIGTERM, then SIGKILL), one is left
  const ports = Object.fromEntries(
    await Promise.all(NAMES.map(async (name) => [name, await freePort()])),
  ) as Record<Name, number>
  const instances = Object.fromEntries(
    await Promise.all(
      NAMES.map(async (name) => [
        name,
        // TRUST_PROXY: haproxy sends X-Forwarded-For (option forwardfor)
        await startServer(t, fresh.url, { TRUST_PROXY: '127.0.0.1', PORT: String(ports[name]) }),
      ]),
    ),
  ) as Record<Name, Server>
  const key = await Promise.any(Object.values(instances).map((s) => s.waitForFirstKey()))

  const config = join(tempDir(t, 'statusd-haproxy-'), 'haproxy.cfg')
  const lbPort = await freePort()
  writeFileSync(config, haproxyConfig(lbPort, ports))
  // -db: in the foreground, as a child of this test (killed when it ends)
  const lb = start(t, HAPROXY, ['-db', '-f', config], {})
  const url = `http://127.0.0.1:${lbPort}`
  await waitUntil(
    async () => (await fetch(`${url}/readyz`).catch(() => null))?.status === 200,
    'haproxy to answer',
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${lb.output()}`)
  })

  // the writer: value writes one after the other through haproxy, w1, w2, …; one that an
  // instance going away leaves unanswered is tried again with its Idempotency-Key
  let retried = 0
  const writer = new StatusdClient({
    url,
    apiKey: key,
    retries: 6,
    retryDelayMs: 50,
    fetch: async (input, init) => {
      const response = await fetch(input, init).catch((err: unknown) => {
        retried += 1
        throw err
      })
      if (!response.ok) retried += 1
      return response
    },
  })
  const created = await writer.set('balanced', { value: 'w0' })
  let acked = 0
  let writing = true
  const writes = (async () => {
    for (let n = 1; writing; n++) {
      await writer.set('balanced', { value: `w${n}` })
      acked = n
    }
  })()
  t.after(async () => {
    writing = false
    await writes.catch(() => {})
  })

  // the watcher. Each connection of its stream: the instance it reached (haproxy's
  // X-Served-By), the writes acknowledged when it was asked for (all committed before the
  // instance read the status for it), and the first write it showed
  const opens: { server: string; acked: number; first: number | null; at: number }[] = []
  const refusals: string[] = []
  const watcher = new StatusdClient({
    url,
    apiKey: key,
    fetch: async (input, init) => {
      const before = acked
      const response = await fetch(input, init)
      if (!new URL(String(input)).pathname.endsWith('/events')) return response
      const server = response.headers.get('x-served-by') ?? '?'
      if (response.ok) opens.push({ server, acked: before, first: null, at: performance.now() })
      else refusals.push(`${response.status} from ${server}`)
      return response
    },
  })
  const stop = new AbortController()
  t.after(() => stop.abort())
  const events: { id: number; n: number }[] = []
  const watching = (async () => {
    for await (const event of watcher.watch(created.id, { signal: stop.signal })) {
      assert.equal(event.type, 'status', 'the stream only carries the status')
      if (event.type !== 'status') return
      const n = Number(event.status.value?.slice(1))
      events.push({ id: event.id, n })
      const open = opens.at(-1)
      if (open && open.first === null) open.first = n
    }
  })()
  const sawWrite = (n: number) =>
    waitUntil(() => (events.at(-1)?.n ?? -1) >= n, `the stream to show w${n}`, 20_000)

  const gaps: string[] = []
  /** Stops the instance the stream is on; the stream goes on through another one. */
  const stopStreamsInstance = async (signal: 'SIGTERM' | 'SIGKILL') => {
    await sawWrite(acked + 3)
    const from = opens.at(-1)?.server as Name
    assert.ok(NAMES.includes(from), `haproxy names the instance: ${from}`)
    const connections = opens.length
    const stoppedAt = performance.now()
    const exit = await instances[from].stop(signal)
    if (signal === 'SIGTERM')
      assert.deepEqual(exit, { code: 0, signal: null }, 'a clean exit after draining')
    await waitUntil(() => opens.length > connections, 'the stream to reconnect', 20_000)
    assert.notEqual(opens.at(-1)?.server, from, 'it reconnected to another instance')
    // for the record, not a bound: how long the client was away
    gaps.push(`${signal} ${(((opens.at(-1)?.at ?? 0) - stoppedAt) / 1000).toFixed(2)} s`)
    // and it goes on showing the writes
    await sawWrite(acked + 3)
  }

  await t.test('SIGTERM: the stream ends cleanly and resumes on another instance', async () => {
    await stopStreamsInstance('SIGTERM')
  })

  await t.test('SIGKILL: the stream is cut and resumes on another instance', async () => {
    await stopStreamsInstance('SIGKILL')
  })

  await t.test('no change missed: versions in order, each the write made at it', async () => {
    writing = false
    await writes
    await sawWrite(acked)
    stop.abort()
    await watching
    assert.deepEqual(refusals, [], 'no reconnect was refused')
    assert.equal(opens.length, 3, 'one connection, then one after each stop')
    // ids are the status's version, the same on every instance: w<n> is always version n + 1
    for (const [i, e] of events.entries()) {
      assert.equal(e.id, e.n + 1, `event ${e.id} shows the write made at version ${e.id}`)
      if (i > 0) assert.ok(e.id > (events[i - 1]?.id ?? 0), 'ids only grow')
    }
    // a connection never starts behind a write acknowledged before it was asked for
    for (const open of opens)
      assert.ok(
        open.first === null || open.first >= open.acked,
        `a connection asked for after w${open.acked} was acknowledged starts at w${open.first}`,
      )
    assert.equal(events.at(-1)?.n, acked, 'the last write reached the stream')
    // every write counted once, retried ones included
    assert.equal((await writer.get(created.id)).changeCount, acked + 1)
    t.diagnostic(
      `${acked} writes (${retried} tries again), ${events.length} events on connections to ${opens.map((o) => o.server).join(', ')}; from the signal to the stream open again: ${gaps.join(', ')}`,
    )
  })
})
