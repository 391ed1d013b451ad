import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { VERSION } from '../../lib/version.ts'
import { announceRevokedKeys } from '../keys/keys.service.ts'
import { adminRoutes } from './admin.routes.ts'
import type { AdminDeps } from './admin.service.ts'

export interface AdminOptions {
  /** Who may sign up (SIGNUP), as the instance page shows it. */
  signup?: 'invite' | 'open'
}

/**
 * The operators' API (docs/operations.md#operators). A change of a user's standing (disabled,
 * demoted, deleted) is told as the accounts tell theirs: this instance's key cache forgets the
 * user and its open streams are checked at once, and every other instance hears it on the
 * credentials bus.
 */
export const admin = fp(
  async (app: FastifyInstance, options: AdminOptions) => {
    const { database, clock, keyCache, streamCredentials, revocations, services } = app
    const startedAt = clock.now()
    const deps: AdminDeps = {
      db: database.db,
      writer: database.writer,
      plans: app.plans,
      clock,
      statuses: services,
      userChanged(userId) {
        keyCache.forgetUser(userId)
        void streamCredentials.checkAll()
        void revocations.publish({ userId })
      },
      keysRevoked: (keyIds) =>
        announceRevokedKeys({ cache: keyCache, sessions: streamCredentials, revocations }, keyIds),
    }
    app.keyedRoutes(adminRoutes, {
      deps,
      publicUrl: app.publicUrl,
      linkBase: app.linkBase,
      mailer: app.mailer,
      instance: {
        version: VERSION,
        engine: database.engine,
        sizeBytes: database.sizeBytes?.bind(database),
        startedAt,
        signup: options.signup ?? 'invite',
        smtp: app.mailer !== null,
        // MQTT_URL is set (docs/integrations.md)
        mqtt: app.mqtt.configured,
        openStreams: () => app.streamQuota.total,
      },
    })
  },
  {
    name: 'admin',
    dependencies: ['core', 'keyed-api', 'keys', 'live-updates', 'statuses', 'mqtt'],
  },
)
