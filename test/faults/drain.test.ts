import assert from 'node:assert/strict'
import net from 'node:net'
import path from 'node:path'
import { it } from 'node:test'
import { buildApp } from '../../src/app.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { makeApp, TEST_PLANS } from '../helpers/app.ts'
import { tempDir } from '../helpers/cleanup.ts'
import { asLogLine, startServer } from '../helpers/processes.ts'

// A graceful shutdown (SIGTERM → app.close(), docs/operations.md#shutdown) finishes the
// requests in flight and ends within moments of the last answer, whatever clients keep open:
// answers given while draining say `Connection: close`, connections that owe no answer are
// closed at once, and a request that reaches the app after the shutdown began is refused
// (503 `unavailable`), never processed.

it('during a graceful shutdown the request in flight completes with Connection: close, and a request pipelined behind it is never processed', async () => {
  const database = createDatabase('sqlite::memory:')
  await migrateToLatest(database.db)
  const user = await createUser(database.db, TEST_PLANS, {
    name: 'u',
    plan: 'unlimited',
    verified: true,
  })
  const { key } = await createApiKey(database.db, user.id)
  const app = await buildApp({ database, plans: TEST_PLANS })
  let received!: () => void
  const firstArrived = new Promise<void>((resolve) => {
    received = resolve
  })
  app.addHook('onRequest', async () => received())
  const handled: string[] = []
  app.addHook('preHandler', async (request) => {
    handled.push(request.url)
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as net.AddressInfo).port

  const socket = net.connect(port, '127.0.0.1')
  let answer = ''
  socket.on('data', (d) => {
    answer += d.toString()
  })
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  const body = '{"value":"LANDED"}'
  socket.write(
    `POST /v1/status-keys/drained HTTP/1.1\r\nHost: x\r\nservice-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
  )
  await firstArrived
  const closing = app.close()
  // the rest of the first request, and a second one pipelined right behind it
  socket.write(
    `${body.slice(5)}POST /v1/status-keys/pipelined HTTP/1.1\r\nHost: x\r\nservice-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
  )
  await closed
  await closing
  // note: RFC 9112 §9.6: after an answer saying close the server processes nothing more on
  // the connection, and its client knows the unanswered request is safe to send again
  const responses = answer.split(/(?=HTTP\/1\.1 )/)
  assert.equal(responses.length, 1, answer)
  assert.match(responses[0] as string, /^HTTP\/1\.1 201/, 'the request in flight completed')
  assert.match(responses[0] as string, /\r\nconnection: close\r\n/i)
  assert.deepEqual(handled, ['/v1/status-keys/drained'], 'the pipelined request was not processed')
})

/** A raw keep-alive HTTP/1.1 client that never closes its side: it only watches. */
function holdingClient(port: number, name: string, events: string[]) {
  // note: allowHalfOpen: the client's side stays open after the server's FIN, as a client
  // that keeps its connection open for reuse would have it
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
  let received = ''
  const waiters: { test: (text: string) => boolean; resolve: (text: string) => void }[] = []
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => {
    received += chunk
    for (const w of [...waiters])
      if (w.test(received)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(received)
      }
  })
  // a reset counts as closed by the server too
  socket.on('error', () => {})
  const closedByServer = new Promise<void>((resolve) => {
    const closed = (how: string) => {
      events.push(`${name} ${how}`)
      resolve()
    }
    socket.once('end', () => closed('closed by the server'))
    socket.once('close', () => closed('closed by the server'))
  })
  return {
    socket,
    closedByServer,
    /** Resolves with everything received once `count` complete responses have arrived. */
    responses(count: number): Promise<string> {
      const complete = (text: string) => {
        const parts = text.split(/(?=HTTP\/1\.1 )/)
        if (parts.length < count) return false
        const last = parts[count - 1] as string
        const length = /\r\ncontent-length: (\d+)/i.exec(last)?.[1]
        const head = last.indexOf('\r\n\r\n')
        return head !== -1 && length !== undefined && last.length - head - 4 >= Number(length)
      }
      if (complete(received)) return Promise.resolve(received)
      return new Promise((resolve) => waiters.push({ test: complete, resolve }))
    },
  }
}

it('shutdown does not wait for keep-alive sockets: the answer in flight carries Connection: close, idle and half-sent connections are closed at once, and the process exits while every client still holds its socket open', async (t) => {
  const server = await startServer(t, path.join(tempDir(t), 'statusd.db'))
  const key = server.firstKey as string
  assert.ok(key, server.output())
  const port = Number(new URL(server.url).port)
  const events: string[] = []

  // a keep-alive connection that was used once and now sits idle
  const idle = holdingClient(port, 'idle', events)
  idle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
  assert.match(await idle.responses(1), /\r\nconnection: keep-alive\r\n/i)
  // a connection whose request head never finishes arriving
  const halfSent = holdingClient(port, 'half-sent', events)
  halfSent.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n')
  // a keep-alive request in flight: its head is in, its body not yet
  const inFlight = holdingClient(port, 'in-flight', events)
  const body = '{"value":"LANDED"}'
  inFlight.socket.write(
    `POST /v1/status-keys/drained HTTP/1.1\r\nHost: x\r\nservice-api-key: ${key}\r\nx-request-id: keep-alive-drain\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
  )
  await server.waitForLine((line) => {
    const log = asLogLine(line)
    return log?.reqId === 'keep-alive-drain' && log.msg === 'incoming request'
  }, 'the server to receive the request in flight')

  server.child.kill('SIGTERM')
  // the idle connection is closed as the drain begins, before the answer in flight
  await idle.closedByServer
  inFlight.socket.write(body.slice(5))
  const answer = await inFlight.responses(1)
  events.push('in-flight answered')
  assert.match(answer, /^HTTP\/1\.1 201 /, answer)
  assert.match(answer, /\r\nconnection: close\r\n/i, 'the answer given while draining says close')
  assert.doesNotMatch(answer, /\r\nkeep-alive: /i)

  const exit = await server.ended()
  events.push('exit')
  assert.equal(exit.code, 0, server.output())
  // no client let go of its connection: the process did not wait for any of them
  for (const client of [idle, halfSent, inFlight])
    assert.equal(client.socket.writableEnded, false, 'the client never closed its side')
  assert.ok(
    events.indexOf('idle closed by the server') < events.indexOf('in-flight answered'),
    `idle connections are closed at once: ${events.join(' → ')}`,
  )
})

// note: a bound on the wait, not a timing assertion: without the cut-off the close never ends
it('during a graceful shutdown a request body that stops arriving is cut off after the request timeout, as at any other time', {
  timeout: 30_000,
}, async (t) => {
  const { app, close, user } = await makeApp(t, {
    deps: { timeouts: { headersTimeout: 50, requestTimeout: 50 } },
  })
  const { key } = await user()
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as net.AddressInfo).port
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
  socket.on('error', () => {})
  // the server's end of the connection closed (the client keeps its own open)
  const closed = new Promise<void>((resolve) => socket.once('end', () => resolve()))
  // note: the 100 Continue says the server has the request head
  const headArrived = new Promise<void>((resolve) => socket.once('data', () => resolve()))
  socket.write(
    `POST /v1/status-keys/slow HTTP/1.1\r\nHost: x\r\nservice-api-key: ${key}\r\nexpect: 100-continue\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"va`,
  )
  await headArrived
  // the server closes although the body never comes and the client never lets go
  await close()
  await closed
})
