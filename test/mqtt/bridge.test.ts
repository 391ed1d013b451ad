import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import type { MqttOptions } from '../../src/modules/mqtt/mqtt.plugin.ts'
import { makeOperator } from '../admin/operators.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { type Lifetime, suiteLifetime } from '../helpers/cleanup.ts'
import { type Broker, type Listener, listen, startMosquitto } from '../helpers/mosquitto.ts'
import { runToEnd } from '../helpers/processes.ts'

// docs/integrations.md: the MQTT bridge against Debian's Mosquitto, started by the test. Sets
// go through the API's own routes (its validation, the key's scopes and statuses); every change
// is published retained; Home Assistant finds the statuses by discovery.

type Settings = NonNullable<MqttOptions['mqtt']>

let prefixes = 0

interface Bridged {
  t: TestApp
  owner: TestUser
  settings: Settings
  mqtt: Listener
  prefix: string
  discovery: string
}

/**
 * An app bridged to `broker` under a prefix of its own (and a discovery prefix of its own),
 * with an owner whose key the bridge acts as, and a client that hears every topic of both.
 */
async function bridged(
  ctx: Lifetime,
  broker: Broker,
  protocolVersion: 4 | 5 = 4,
): Promise<Bridged> {
  prefixes += 1
  const prefix = `statusd${prefixes}-${process.pid}`
  const discovery = `ha${prefixes}-${process.pid}`
  // the key is made once the app runs: the bridge reads its settings at each use
  const settings: Settings = {
    url: broker.url,
    apiKey: 'sdk_not_yet',
    prefix,
    protocolVersion,
    discovery,
    reconcileMs: 100,
    renewMs: 200,
    reconnectMinMs: 100,
    reconnectMaxMs: 400,
  }
  const mqtt = await listen(ctx, broker.url, [`${prefix}/#`, `${discovery}/#`])
  const t = await makeApp(ctx, { deps: { mqtt: settings } })
  const owner = await t.user()
  settings.apiKey = owner.key
  await mqtt.waitFor(`${prefix}/bridge/state`, (p) => p === 'online', 'the bridge to be online')
  return { t, owner, settings, mqtt, prefix, discovery }
}

const json = (payload: string) => JSON.parse(payload)

describe('the MQTT bridge (docs/integrations.md#topics)', () => {
  const suite = suiteLifetime()
  let broker: Broker
  before(async () => {
    broker = await startMosquitto(suite)
  })

  it('sets a status from a plain-text payload on …/set, and publishes it retained on …/state and …/json', async (ctx) => {
    const { t, owner, mqtt, prefix } = await bridged(ctx, broker)
    await mqtt.publish(`${prefix}/door/set`, 'OPEN')
    const state = await mqtt.waitFor(`${prefix}/door/state`, (p) => p === 'OPEN')
    assert.equal(state.payload, 'OPEN')
    const status = json(
      (await mqtt.waitFor(`${prefix}/door/json`, (p) => json(p).value === 'OPEN')).payload,
    )
    const read = await t.request(owner, 'GET', '/v1/status-keys/door')
    assert.equal(read.statusCode, 200)
    assert.deepEqual(status, read.json(), 'the Status as the API answers it')
  })

  it('speaks MQTT 5 with MQTT_PROTOCOL=5: a set and its state, as with 3.1.1', async (ctx) => {
    const { t, owner, mqtt, prefix } = await bridged(ctx, broker, 5)
    await mqtt.publish(`${prefix}/lamp/set`, 'ON')
    await mqtt.waitFor(`${prefix}/lamp/state`, (p) => p === 'ON')
    const read = await t.request(owner, 'GET', '/v1/status-keys/lamp')
    assert.equal(read.json().value, 'ON')
  })

  it('takes the mosquitto_pub line of the docs, and mosquitto_sub reads the state retained', async (ctx) => {
    const { mqtt, prefix } = await bridged(ctx, broker)
    const port = String(broker.port)
    const pub = await runToEnd(
      ctx,
      'mosquitto_pub',
      [...['-h', '127.0.0.1', '-p', port, '-t', `${prefix}/meeting-room/set`, '-m', 'BUSY']],
      { PATH: process.env.PATH },
    )
    assert.equal(pub.code, 0, pub.stderr)
    await mqtt.waitFor(`${prefix}/meeting-room/state`, (p) => p === 'BUSY')
    const sub = await runToEnd(
      ctx,
      'mosquitto_sub',
      [...['-h', '127.0.0.1', '-p', port, '-t', `${prefix}/meeting-room/state`, '-C', '1']],
      { PATH: process.env.PATH },
    )
    assert.equal(sub.code, 0, sub.stderr)
    assert.equal(sub.stdout.trim(), 'BUSY')
  })

  it('sets a status from a JSON payload as the POST by key takes it', async (ctx) => {
    const { t, owner, mqtt, prefix } = await bridged(ctx, broker)
    await mqtt.publish(`${prefix}/desk/set`, JSON.stringify({ value: 'BUSY', colorNo: 3 }))
    const status = json(
      (await mqtt.waitFor(`${prefix}/desk/json`, (p) => json(p).value === 'BUSY')).payload,
    )
    assert.equal(status.colorNo, 3)
    const read = (await t.request(owner, 'GET', '/v1/status-keys/desk')).json()
    assert.equal(read.value, 'BUSY')
    assert.equal(read.colorNo, 3)
  })

  it('refuses on …/error what the API refuses, and changes nothing', async (ctx) => {
    const { t, owner, settings, mqtt, prefix } = await bridged(ctx, broker)
    const door = (await t.request(owner, 'POST', '/v1/status-keys/door', { value: 'OPEN' })).json()
    const other = (await t.request(owner, 'POST', '/v1/status-keys/other', { value: 'X' })).json()
    const keyOf = async (body: object) => {
      const res = await t.request(owner, 'POST', '/v1/user/api-keys', body)
      assert.equal(res.statusCode, 201, res.body)
      return res.json().key as string
    }
    const scenarios = [
      {
        name: 'a value longer than a value may be',
        key: owner.key,
        topic: 'door',
        payload: 'FAR TOO LONG A VALUE',
        errorCode: 'validationError',
      },
      {
        name: 'JSON the API cannot read',
        key: owner.key,
        topic: 'door',
        payload: '{"value":',
        errorCode: 'invalidJson',
      },
      {
        name: 'a status key of characters a key may not hold',
        key: owner.key,
        topic: 'no spaces here',
        payload: 'OPEN',
        errorCode: 'invalidStatusKey',
      },
      {
        name: 'an unknown status key, by a key that may not create statuses',
        key: await keyOf({ scopes: ['status:value', 'status:read'] }),
        topic: 'window',
        payload: 'OPEN',
        errorCode: 'insufficientScope',
      },
      {
        name: 'a key without the scope status:value',
        key: await keyOf({ scopes: ['status:read'] }),
        topic: 'door',
        payload: 'SHUT',
        errorCode: 'insufficientScope',
      },
      {
        name: 'a key confined to another status',
        key: await keyOf({ scopes: ['status:value', 'status:read'], statusIds: [other.id] }),
        topic: 'door',
        payload: 'SHUT',
        errorCode: 'notFound',
      },
    ]
    for (const scenario of scenarios) {
      settings.apiKey = scenario.key
      mqtt.heard.length = 0
      await mqtt.publish(`${prefix}/${scenario.topic}/set`, scenario.payload)
      const refusal = json(
        (await mqtt.waitFor(`${prefix}/${scenario.topic}/error`, () => true, scenario.name))
          .payload,
      )
      assert.equal(refusal.errorCode, scenario.errorCode, scenario.name)
      assert.equal(typeof refusal.message, 'string', scenario.name)
      assert.deepEqual(Object.keys(refusal).sort(), ['errorCode', 'message'], scenario.name)
      const now = (await t.request(owner, 'GET', `/v1/status/${door.id}`)).json()
      assert.equal(now.value, 'OPEN', `${scenario.name}: nothing changed`)
      assert.equal(now.changeCount, 1, `${scenario.name}: nothing changed`)
      const window = await t.request(owner, 'GET', '/v1/status-keys/window')
      assert.equal(window.statusCode, 404, `${scenario.name}: nothing created`)
    }
  })

  it('publishes a change made over HTTP, retained for a client that subscribes later', async (ctx) => {
    const { t, owner, mqtt, prefix } = await bridged(ctx, broker)
    await t.request(owner, 'POST', '/v1/status-keys/lamp', { value: 'ON' })
    await mqtt.waitFor(`${prefix}/lamp/state`, (p) => p === 'ON')
    const put = await t.request(owner, 'PUT', '/v1/status-keys/lamp/value', 'OFF', {
      'content-type': 'text/plain',
    })
    assert.equal(put.statusCode, 200, put.body)
    await mqtt.waitFor(`${prefix}/lamp/json`, (p) => json(p).value === 'OFF')
    const late = await listen(ctx, broker.url, [`${prefix}/lamp/state`, `${prefix}/lamp/json`])
    const state = await late.waitFor(`${prefix}/lamp/state`, (p) => p === 'OFF')
    assert.equal(state.retain, true)
    const status = await late.waitFor(`${prefix}/lamp/json`, (p) => json(p).value === 'OFF')
    assert.equal(status.retain, true)
  })

  it('gives Home Assistant a sensor per status and a select of its palette, cleared when it is deleted (docs/integrations.md#home-assistant)', async (ctx) => {
    const { t, owner, mqtt, prefix, discovery } = await bridged(ctx, broker)
    const room = (
      await t.request(owner, 'POST', '/v1/status-keys/room', {
        value: 'FREE',
        palette: [
          { value: 'FREE', colorNo: 3 },
          { value: 'BUSY', colorNo: 1 },
        ],
      })
    ).json()
    const sensorTopic = `${discovery}/sensor/statusd_${room.id}/config`
    const selectTopic = `${discovery}/select/statusd_${room.id}/config`
    const sensor = json((await mqtt.waitFor(sensorTopic, (p) => p !== '')).payload)
    assert.deepEqual(sensor, {
      name: 'room',
      unique_id: `statusd_${room.id}`,
      device: { identifiers: ['statusd'], name: 'statusd' },
      availability_topic: `${prefix}/bridge/state`,
      payload_available: 'online',
      payload_not_available: 'offline',
      state_topic: `${prefix}/room/state`,
      json_attributes_topic: `${prefix}/room/json`,
    })
    const select = json((await mqtt.waitFor(selectTopic, (p) => p !== '')).payload)
    assert.deepEqual(select.options, ['FREE', 'BUSY'])
    assert.equal(select.command_topic, `${prefix}/room/set`)
    assert.equal(select.state_topic, `${prefix}/room/state`)

    // what Home Assistant sends when someone picks an option
    await mqtt.publish(select.command_topic, 'BUSY')
    await mqtt.waitFor(`${prefix}/room/state`, (p) => p === 'BUSY')

    const gone = await t.request(owner, 'DELETE', `/v1/status/${room.id}`)
    assert.equal(gone.statusCode, 204, gone.body)
    const topics = [sensorTopic, selectTopic, `${prefix}/room/state`, `${prefix}/room/json`]
    for (const topic of topics) await mqtt.waitFor(topic, (p) => p === '', `${topic} cleared`)
    // a client that subscribes now gets nothing retained: the broker sends what it retains
    // before it handles the client's next message, so the marker comes after any of it
    const late = await listen(ctx, broker.url, [...topics, `${prefix}/marker`])
    await late.publish(`${prefix}/marker`, 'after')
    await late.waitFor(`${prefix}/marker`, (p) => p === 'after')
    assert.deepEqual(
      late.heard.filter((m) => m.topic !== `${prefix}/marker`),
      [],
      'nothing retained',
    )
  })

  it("clears the topics and configs of a status that goes out of the key's reach", async (ctx) => {
    const { t, owner, settings, mqtt, prefix, discovery } = await bridged(ctx, broker)
    const kept = (await t.request(owner, 'POST', '/v1/status-keys/kept', { value: 'A' })).json()
    const dropped = (
      await t.request(owner, 'POST', '/v1/status-keys/dropped', { value: 'B' })
    ).json()
    const sensorOf = (id: string) => `${discovery}/sensor/statusd_${id}/config`
    await mqtt.waitFor(sensorOf(dropped.id), (p) => p !== '')
    await mqtt.waitFor(`${prefix}/dropped/state`, (p) => p === 'B')
    // the bridge now acts as a key confined to the other status
    const confined = await t.request(owner, 'POST', '/v1/user/api-keys', {
      scopes: ['status:value', 'status:read'],
      statusIds: [kept.id],
    })
    assert.equal(confined.statusCode, 201, confined.body)
    settings.apiKey = confined.json().key
    mqtt.heard.length = 0
    await mqtt.waitFor(sensorOf(dropped.id), (p) => p === '', 'its config cleared')
    await mqtt.waitFor(`${prefix}/dropped/state`, (p) => p === '', 'its state cleared')
    await mqtt.waitFor(`${prefix}/dropped/json`, (p) => p === '', 'its JSON cleared')
    await t.request(owner, 'POST', '/v1/status-keys/kept', { value: 'C' })
    await mqtt.waitFor(`${prefix}/kept/state`, (p) => p === 'C', 'the other still published')
    assert.equal(
      mqtt.heard.some((m) => m.topic === sensorOf(kept.id) && m.payload === ''),
      false,
      'the status in reach keeps its config',
    )
  })

  it('reports that MQTT is set up on the instance page (docs/api.md#operators)', async (ctx) => {
    const { t } = await bridged(ctx, broker)
    const operator = await makeOperator(t)
    const res = await t.request(operator, 'GET', '/v1/admin/instance')
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().mqtt, true)
  })
})

it('a broker that is down: HTTP writes still answer; the bridge reconnects and republishes (docs/integrations.md#delivery)', async (ctx) => {
  const broker = await startMosquitto(ctx)
  const { t, owner, mqtt, prefix } = await bridged(ctx, broker)
  await t.request(owner, 'POST', '/v1/status-keys/pump', { value: 'ON' })
  await mqtt.waitFor(`${prefix}/pump/state`, (p) => p === 'ON')

  await broker.stop()
  for (const value of ['OFF', 'ON', 'OFF']) {
    const put = await t.request(owner, 'POST', '/v1/status-keys/pump', { value })
    assert.equal(put.statusCode, 200, put.body)
  }

  mqtt.heard.length = 0
  // a broker without persistence comes back empty: what it shows, the bridge published again
  await broker.start()
  await mqtt.waitFor(`${prefix}/bridge/state`, (p) => p === 'online', 'the bridge back online')
  await mqtt.waitFor(`${prefix}/pump/state`, (p) => p === 'OFF', 'the state republished')
})
