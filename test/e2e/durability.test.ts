import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { after, before, it } from 'node:test'
import { asLogLine, type Json, type Server, startServer } from '../helpers/processes.ts'

// docs/operations.md#durability-how-writes-are-committed: SQLite storage is durable (WAL,
// synchronous=FULL) across a clean stop (SIGTERM) and a crash (SIGKILL), and SIGTERM drains
// in-flight requests, then closes storage cleanly.

let dir: string

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-e2e-durability-'))
})
after(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

/** A database file of its own for one test. */
const freshDb = (name: string) => path.join(dir, name, 'statusd.db')

async function call(server: Server, key: string, method: string, url: string, body?: unknown) {
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: {
      'service-api-key': key,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

/** The WAL is checkpointed into the main file when the last connection closes cleanly. */
function walIsEmpty(dbFile: string): boolean {
  const wal = `${dbFile}-wal`
  return !fs.existsSync(wal) || fs.statSync(wal).size === 0
}

it('SIGTERM, then a start on the same file: statuses and change counts survive', async (t) => {
  const dbFile = freshDb('sigterm')
  const first = await startServer(t, dbFile)
  const key = first.firstKey as string
  assert.ok(key, first.output())

  assert.equal(
    (await call(first, key, 'POST', '/v1/status-keys/room-1', { value: 'A' })).status,
    201,
  )
  assert.equal(
    (await call(first, key, 'POST', '/v1/status-keys/room-1', { value: 'A' })).status,
    200,
  )
  assert.equal(
    (await call(first, key, 'POST', '/v1/status-keys/room-1', { value: 'B' })).status,
    200,
  )
  const build = await call(first, key, 'POST', '/v1/status-keys/build-main', {
    name: 'Build main',
    value: 'PASSING',
    colorNo: 5,
  })
  assert.equal(build.status, 201)
  const patched = await call(first, key, 'PATCH', `/v1/status/${build.body.id}`, {
    value: 'FAILING',
    description: 'since 10:00',
  })
  assert.equal(patched.status, 200)
  const room = await call(first, key, 'GET', '/v1/status-keys/room-1')
  assert.equal(room.body.changeCount, 3)
  const buildNow = await call(first, key, 'GET', `/v1/status/${build.body.id}`)
  assert.equal(buildNow.body.changeCount, 2)
  const list = await call(first, key, 'GET', '/v1/user/status')

  const exit = await first.stop('SIGTERM')
  assert.equal(exit.code, 0, first.output())
  assert.ok(walIsEmpty(dbFile), 'a clean stop leaves no un-checkpointed WAL')

  const second = await startServer(t, dbFile)
  assert.equal(second.firstKey, null)
  assert.deepEqual(await call(second, key, 'GET', '/v1/status-keys/room-1'), room)
  assert.deepEqual(await call(second, key, 'GET', `/v1/status/${build.body.id}`), buildNow)
  assert.deepEqual(await call(second, key, 'GET', '/v1/user/status'), list)
  // counting goes on from where it was
  const next = await call(second, key, 'POST', '/v1/status-keys/room-1', { value: 'B' })
  assert.equal(next.body.changeCount, 4)
  assert.equal((await second.stop('SIGTERM')).code, 0)
})

it('SIGKILL, then a start on the same file: every acknowledged write is there', async (t) => {
  const dbFile = freshDb('sigkill')
  const first = await startServer(t, dbFile)
  const key = first.firstKey as string
  assert.ok(key, first.output())

  const acknowledged = new Map<string, unknown>()
  for (let i = 0; i < 20; i++) {
    const res = await call(first, key, 'POST', `/v1/status-keys/item-${i}`, { value: `v${i}` })
    assert.equal(res.status, 201)
    acknowledged.set(res.body.id, res.body)
  }
  // repeated updates of one status: its change count is part of what must survive
  let last: { id: string; changeCount: number } | undefined
  for (let i = 0; i < 5; i++) {
    const res = await call(first, key, 'POST', '/v1/status-keys/item-0', { value: 'same' })
    assert.equal(res.status, 200)
    last = res.body
  }
  assert.equal(last?.changeCount, 6)
  acknowledged.set(last.id, last)

  // no drain, no close: the process dies right after the last acknowledgement
  first.child.kill('SIGKILL')
  const exit = await first.exited
  assert.equal(exit.signal, 'SIGKILL')

  const second = await startServer(t, dbFile)
  assert.equal(second.firstKey, null, 'the first user survived too')
  for (const [id, body] of acknowledged) {
    const res = await call(second, key, 'GET', `/v1/status/${id}`)
    assert.equal(res.status, 200, `acknowledged status ${id} is there`)
    assert.deepEqual(res.body, body)
  }
  const list = await call(second, key, 'GET', '/v1/user/status')
  assert.equal(list.body.length, 20)
  assert.equal((await second.stop('SIGTERM')).code, 0)
})

it('SIGTERM drains: a request in flight completes, the process exits 0, the WAL is checkpointed', async (t) => {
  const dbFile = freshDb('drain')
  const server = await startServer(t, dbFile)
  const key = server.firstKey as string
  assert.ok(key, server.output())
  const url = new URL('/v1/status-keys/drained', server.url)
  const body = JSON.stringify({ name: 'Drained write', value: 'LANDED' })

  // The request goes out with its headers and the start of its body, then waits.
  const req = http.request(url, {
    method: 'POST',
    agent: false,
    headers: {
      'service-api-key': key,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-request-id': 'drain-test-1',
    },
  })
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      res.on('error', reject)
    })
    req.on('error', reject)
  })
  req.write(body.slice(0, 10))
  await server.waitForLine((line) => {
    const log = asLogLine(line)
    return log?.reqId === 'drain-test-1' && log.msg === 'incoming request'
  }, 'the server to receive the in-flight request')

  // SIGTERM arrives while the server is still reading that request's body
  server.child.kill('SIGTERM')
  await server.waitForLine(
    (line) => asLogLine(line)?.msg === 'shutting down: draining requests',
    'the shutdown to begin',
  )
  req.end(body.slice(10))

  const res = await response
  assert.equal(res.status, 201, `the in-flight request completes: ${res.body}`)
  assert.equal(JSON.parse(res.body).value, 'LANDED')
  // note: no second signal: SIGTERM is handled once, a second one ends the process at once
  const exit = await server.ended()
  assert.equal(exit.code, 0, `exit 0 after draining\n${server.output()}`)
  assert.equal(exit.signal, null)
  assert.ok(walIsEmpty(dbFile), 'storage closed cleanly: the WAL is checkpointed')
  assert.ok(
    !server.logs().some((l) => typeof l.level === 'number' && l.level >= 50),
    `no error logged during shutdown\n${server.output()}`,
  )

  const again = await startServer(t, dbFile)
  const stored = await call(again, key, 'GET', '/v1/status-keys/drained')
  assert.equal(stored.status, 200, 'the drained write was stored')
  assert.equal(stored.body.value, 'LANDED')
  assert.equal((await again.stop('SIGTERM')).code, 0)
})
