import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createDatabase } from '../../src/db/create-database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { TEST_PLANS } from '../helpers/app.ts'
import { postgresOnly, testDatabase } from '../helpers/engine.ts'
import { plansWithoutRateLimit } from '../helpers/journey-people.ts'
import { listen, startMosquitto } from '../helpers/mosquitto.ts'
import { asLogLine, type Server, startServer } from '../helpers/processes.ts'

// docs/integrations.md#one-bridge-across-instances: with two instances on one PostgreSQL
// database, exactly one bridges; when it is killed (SIGKILL: no goodbye, its lease simply
// runs out), the other takes over and sets through MQTT work again. Every wait is for an
// event (a log line, a message on the broker), bounded by the helpers.

const BRIDGES = 'MQTT bridge: this instance bridges'
const bridges = (server: Server) => server.logs().some((line) => line.msg === BRIDGES)

test('two instances on PostgreSQL: one bridges, and the other takes over when it is killed', {
  skip: postgresOnly,
}, async (t) => {
  const broker = await startMosquitto(t)
  const fresh = await testDatabase(t)
  // the bridge's key, made before the instances start
  const database = createDatabase(fresh.url, { poolSize: 2 })
  t.after(() => database.close())
  await migrateToLatest(database.db)
  const user = await createUser(database.db, TEST_PLANS, {
    name: 'bridge owner',
    plan: 'unlimited',
    verified: true,
  })
  const { key } = await createApiKey(database.db, user.id)

  const prefix = `takeover-${process.pid}`
  const mqtt = await listen(t, broker.url, [`${prefix}/#`])
  const env = {
    PLANS_FILE: plansWithoutRateLimit(t),
    MQTT_URL: broker.url,
    MQTT_API_KEY: key,
    MQTT_PREFIX: prefix,
    MQTT_DISCOVERY: '',
  }
  const servers = await Promise.all([
    startServer(t, fresh.url, env),
    startServer(t, fresh.url, env),
  ])
  const holder = await Promise.any(
    servers.map(async (server) => {
      await server.waitForLine((line) => asLogLine(line)?.msg === BRIDGES, 'a bridge')
      return server
    }),
  )
  const other = servers.find((server) => server !== holder) as Server
  await mqtt.waitFor(`${prefix}/bridge/state`, (p) => p === 'online', 'the bridge online')
  await mqtt.publish(`${prefix}/gate/set`, 'OPEN')
  await mqtt.waitFor(`${prefix}/gate/state`, (p) => p === 'OPEN', 'a set through the holder')
  assert.equal(bridges(other), false, 'the other instance does not bridge meanwhile')

  mqtt.heard.length = 0
  holder.child.kill('SIGKILL')
  await holder.ended()
  // the broker tells of the lost connection by the bridge's last will
  await mqtt.waitFor(`${prefix}/bridge/state`, (p) => p === 'offline', 'the last will')
  await other.waitForLine((line) => asLogLine(line)?.msg === BRIDGES, 'the takeover')
  await mqtt.waitFor(`${prefix}/bridge/state`, (p) => p === 'online', 'the bridge online again')
  await mqtt.publish(`${prefix}/gate/set`, 'SHUT')
  await mqtt.waitFor(`${prefix}/gate/state`, (p) => p === 'SHUT', 'a set through the new holder')
})
