import assert from 'node:assert/strict'
import net from 'node:net'
import { it } from 'node:test'
import { buildApp } from '../../src/app.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { TEST_PLANS } from '../helpers/app.ts'

// A graceful shutdown (SIGTERM → app.close()) finishes the requests in flight; a request that
// arrives on an open connection after the shutdown began is refused with 503 `unavailable`
// (docs/api.md#errors) and `Connection: close`, like every other error (not Fastify's own body).

it('during a graceful shutdown a new request on an open connection gets 503 unavailable, the one in flight completes', async () => {
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
    `${body.slice(5)}GET /v1/checkAuth HTTP/1.1\r\nHost: x\r\nservice-api-key: ${key}\r\n\r\n`,
  )
  await closed
  await closing
  const responses = answer.split(/(?=HTTP\/1\.1 )/)
  assert.equal(responses.length, 2, answer)
  assert.match(responses[0] as string, /^HTTP\/1\.1 201/, 'the request in flight completed')
  const second = responses[1] as string
  assert.match(second, /^HTTP\/1\.1 503/)
  assert.match(second, /\r\nconnection: close\r\n/i)
  const error = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4))
  assert.equal(error.errorCode, 'unavailable')
  assert.equal(typeof error.requestId, 'string')
})
