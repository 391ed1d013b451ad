import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mqtt, { type MqttClient } from 'mqtt'
import { bounded } from './bounded.ts'
import { defer, type Lifetime } from './cleanup.ts'
import { freePort } from './pg-cluster.ts'
import { type Proc, start } from './processes.ts'

// Debian's Mosquitto broker on a free loopback port, and an MQTT client that records what it
// hears, for the bridge's tests (docs/integrations.md).

/** A broker the test started; `stop` and `start` take it down and bring it back on its port. */
export interface Broker {
  url: string
  port: number
  stop(): Promise<void>
  start(): Promise<void>
}

/**
 * Starts `mosquitto` (MOSQUITTO_BIN, else Debian's /usr/sbin/mosquitto) on 127.0.0.1 with
 * anonymous access and no persistence; stopped and its files removed when `t` ends.
 */
export async function startMosquitto(t: Lifetime): Promise<Broker> {
  const bin = process.env.MOSQUITTO_BIN ?? '/usr/sbin/mosquitto'
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'statusd-mosquitto-'))
  defer(t, () => rmSync(dir, { recursive: true, force: true }))
  const conf = join(dir, 'mosquitto.conf')
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      'persistence false',
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      'log_type notice',
      'log_type information',
      // as root, mosquitto would switch to its own user: it stays who started it
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      '',
    ].join('\n'),
  )
  let proc: Proc | undefined
  const broker: Broker = {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async start() {
      proc = start(t, bin, ['-c', conf], { PATH: process.env.PATH })
      await proc.waitForLine((line) => / running$/.test(line), 'mosquitto to be running')
    },
    async stop() {
      await proc?.stop('SIGTERM')
      proc = undefined
    },
  }
  await broker.start()
  return broker
}

/** A message as the recording client heard it. */
export interface Heard {
  topic: string
  payload: string
  retain: boolean
}

/** An MQTT client that records every message of the topics it subscribed to. */
export interface Listener {
  client: MqttClient
  heard: Heard[]
  /** Waits (bounded) for a message on `topic` (heard already or to come) that `test` accepts. */
  waitFor(
    topic: string,
    test: (payload: string, message: Heard) => boolean,
    what?: string,
  ): Promise<Heard>
  /** Publishes and waits for the broker to take it. */
  publish(topic: string, payload: string): Promise<void>
}

/** Connects to the broker and subscribes to `topics` (wildcards allowed); ended when `t` ends. */
export async function listen(t: Lifetime, url: string, topics: string[]): Promise<Listener> {
  const client = await bounded(
    'an MQTT client to connect',
    mqtt.connectAsync(url, { reconnectPeriod: 200 }),
  )
  defer(t, () => client.endAsync(true))
  const heard: Heard[] = []
  const waiters: {
    topic: string
    test: (payload: string, m: Heard) => boolean
    resolve: (m: Heard) => void
  }[] = []
  client.on('message', (topic, payload, packet) => {
    const message = { topic, payload: payload.toString('utf8'), retain: packet.retain }
    heard.push(message)
    for (const w of [...waiters])
      if (w.topic === topic && w.test(message.payload, message)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(message)
      }
  })
  await client.subscribeAsync(topics, { qos: 1 })
  return {
    client,
    heard,
    waitFor(topic, test, what = `a message on ${topic}`) {
      const seen = heard.findLast((m) => m.topic === topic && test(m.payload, m))
      if (seen) return Promise.resolve(seen)
      return bounded(
        what,
        new Promise<Heard>((resolve) => waiters.push({ topic, test, resolve })),
        undefined,
        () => `heard:\n${heard.map((m) => `${m.topic} ${m.payload}`).join('\n')}`,
      )
    },
    async publish(topic, payload) {
      await client.publishAsync(topic, payload, { qos: 1 })
    },
  }
}
