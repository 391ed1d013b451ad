import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { LeaseHolder } from './lease-holder.ts'
import { MqttBridge, type MqttSettings } from './mqtt-bridge.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The MQTT bridge (docs/integrations.md): whether it is set up, and this instance's part. */
    mqtt: {
      /** MQTT_URL is set. */
      configured: boolean
      /** The bridge while this instance holds the lease; undefined on the others. */
      readonly bridge: MqttBridge | undefined
    }
  }
}

/** The lease the bridge runs under: one instance at a time bridges. */
const LEASE_NAME = 'mqtt-bridge'

export interface MqttOptions {
  /** MQTT_URL and the other settings (docs/integrations.md#broker-settings); absent or null: no bridge. */
  mqtt?:
    | (MqttSettings & {
        /** Tuning for tests and the bench; each has its default in the bridge or the lease. */
        reconcileMs?: number
        leaseMs?: number
        renewMs?: number
        reconnectMinMs?: number
        reconnectMaxMs?: number
      })
    | null
}

/**
 * The MQTT bridge (docs/integrations.md): when MQTT_URL is set, every instance tries to take
 * the bridge's lease in the database; the one that holds it runs the bridge, and another takes
 * over when it stops or can no longer renew it.
 */
export const mqttBridge = fp(
  async (app: FastifyInstance, options: MqttOptions) => {
    const settings = options.mqtt ?? null
    let bridge: MqttBridge | undefined
    app.decorate('mqtt', {
      configured: settings !== null,
      get bridge() {
        return bridge
      },
    })
    if (settings === null) return
    const { services, statusEvents, keyCache, clock } = app
    const lease = new LeaseHolder({
      writer: app.writer,
      clock,
      name: LEASE_NAME,
      holder: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
      ...(settings.leaseMs !== undefined && { leaseMs: settings.leaseMs }),
      ...(settings.renewMs !== undefined && { renewMs: settings.renewMs }),
      onAcquired: () => {
        app.log.info({}, 'MQTT bridge: this instance bridges')
        bridge = new MqttBridge({
          settings,
          inject: async (request) => {
            const response = await app.inject(request)
            return { statusCode: response.statusCode, body: response.body }
          },
          services: { ...services, events: statusEvents },
          keyCache,
          clock,
          log: app.log,
          ...(settings.reconcileMs !== undefined && { reconcileMs: settings.reconcileMs }),
          ...(settings.reconnectMinMs !== undefined && {
            reconnectMinMs: settings.reconnectMinMs,
          }),
          ...(settings.reconnectMaxMs !== undefined && {
            reconnectMaxMs: settings.reconnectMaxMs,
          }),
        })
        bridge.start()
      },
      onLost: async () => {
        const stopping = bridge
        bridge = undefined
        app.log.info({}, 'MQTT bridge: this instance no longer bridges')
        await stopping?.stop()
      },
      onError: (err) => app.log.warn({ err }, 'MQTT bridge: the lease could not be renewed'),
    })
    app.addHook('onReady', async () => lease.start())
    app.addHook('preClose', () => lease.close())
  },
  {
    name: 'mqtt',
    dependencies: ['core', 'keys', 'live-updates', 'health', 'statuses'],
  },
)
