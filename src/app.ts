import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { type AccountsOptions, accounts } from './modules/accounts/accounts.plugin.ts'
import { admin } from './modules/admin/admin.plugin.ts'
import { audit } from './modules/audit/audit.plugin.ts'
import { type BackupsOptions, backups } from './modules/backups/backups.plugin.ts'
import { boards } from './modules/boards/boards.plugin.ts'
import { events } from './modules/events/events.plugin.ts'
import { type LiveUpdatesOptions, liveUpdates } from './modules/events/live-updates.plugin.ts'
import { health } from './modules/health/health.plugin.ts'
import { type KeysOptions, keys } from './modules/keys/keys.plugin.ts'
import { type MqttOptions, mqttBridge } from './modules/mqtt/mqtt.plugin.ts'
import {
  type NotificationsOptions,
  notifications,
} from './modules/notifications/notifications.plugin.ts'
import { schedules } from './modules/schedules/schedules.plugin.ts'
import { type StatusesOptions, statuses } from './modules/statuses/statuses.plugin.ts'
import { type TimedOptions, timed } from './modules/timed/timed.plugin.ts'
import { type CoreOptions, core } from './plugins/core.ts'
import { errorHandlerPlugin } from './plugins/error-handler.ts'
import { keyedApi, keyedRoutes } from './plugins/keyed-api.ts'
import { metricsPlugin } from './plugins/metrics.ts'
import { type RoutePolicyOptions, routePolicies } from './plugins/route-policies.ts'
import { type ServerOptionsInput, serverOptions } from './plugins/server-options.ts'
import { web } from './web/web.plugin.ts'
import { isWebUrl, sendWebError } from './web/web.routes.ts'

/** What the app is built with: the options of each of its parts (documented there). */
export type AppDeps = Omit<CoreOptions, 'timeouts'> &
  ServerOptionsInput &
  KeysOptions &
  RoutePolicyOptions &
  LiveUpdatesOptions &
  StatusesOptions &
  TimedOptions &
  NotificationsOptions &
  AccountsOptions &
  BackupsOptions &
  MqttOptions

/**
 * Builds the whole service as a Fastify instance that never listens (tests inject into it).
 * The parts are registered in this order; each uses what those above it decorated, and at
 * shutdown each lets go of what it holds before those above it (storage last).
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // errors raised before routing on the share page's paths get its page or badge
  const pages = { owns: isWebUrl, send: sendWebError }
  const { options, timeouts } = serverOptions(deps, pages)
  const app = Fastify(options).withTypeProvider<TypeBoxTypeProvider>()

  // what every request and module shares: storage, plans, clock, links, request checks
  await app.register(core, { ...deps, timeouts })
  // where the modules add their keyed routes (mounted last, by keyedApi)
  await app.register(keyedRoutes)
  // the key cache authentication reads, the revocation bus
  await app.register(keys, deps)
  await app.register(errorHandlerPlugin)
  // what routes declare in their config, acted on: before any route is registered
  await app.register(routePolicies, deps)
  // the bus of committed changes, the status feeds, the render cache, the stream quota
  await app.register(liveUpdates, deps)
  await app.register(health)
  await app.register(metricsPlugin, { gauges: deps.database.gauges, streams: app.streamQuota })

  // the modules: each brings its services, its workers and its routes
  await app.register(statuses, deps)
  // values written at a set time (ends, schedules), on every instance, each once
  await app.register(timed, deps)
  await app.register(notifications, deps)
  await app.register(accounts, deps)
  await app.register(audit)
  await app.register(events)
  await app.register(boards)
  await app.register(schedules)
  // the MQTT bridge, on the one instance that holds its lease (docs/integrations.md)
  await app.register(mqttBridge, deps)
  await app.register(admin, deps)
  await app.register(backups, deps)
  await app.register(web)

  // last: every module's keyed routes, in the one scope of the keyed API (/v1)
  await app.register(keyedApi, { plans: deps.plans, counter: deps.database.requestCounter })
  return app
}
