import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ServiceDeps } from '../service-deps.ts'
import { historyRoutes } from './history.routes.ts'
import { HistorySweeper } from './history-sweep.ts'
import { invitationPreviewRoutes, invitationRoutes } from './invitations.routes.ts'
import { searchRoutes } from './search.routes.ts'
import { shareRoutes } from './share.routes.ts'
import { shareLinkRoutes, shareLinkViewRoutes } from './share-links.routes.ts'
import { sharingRoutes } from './sharing.routes.ts'
import { StaleDetector } from './stale-detector.ts'
import { STALE_CHECK_INTERVAL_MS } from './staleness.ts'
import { statusRoutes } from './statuses.routes.ts'
import { transferRoutes } from './transfer.routes.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** What the services of statuses (and of what is built on them) take first. */
    services: ServiceDeps
  }
}

/** A deletion whose sweep was cut short (a crash, another instance's shutdown) waits at most this. */
export const HISTORY_SWEEP_INTERVAL_MS = 5 * 60 * 1000

export interface StatusesOptions {
  /** How often the history sweep looks for deletions left unswept (HISTORY_SWEEP_INTERVAL_MS). */
  historySweepIntervalMs?: number
  /** How often this instance looks for statuses that went stale (STALE_CHECK_INTERVAL_MS). */
  staleCheckIntervalMs?: number
}

/**
 * Statuses (docs/api.md): their keyed routes, sharing, invitations, history, search and
 * private share links; the public views of shared statuses; the history sweep and the stale
 * detector, which run in the background.
 */
export const statuses = fp(
  async (app: FastifyInstance, options: StatusesOptions) => {
    const { database, clock, linkBase, publicUrl, writer, statusEvents: events } = app
    // deleted statuses' history goes in batches, in the background (docs/operations.md#history-sweep)
    const historySweep = new HistorySweeper({
      deps: { db: database.db, writer },
      intervalMs: options.historySweepIntervalMs ?? HISTORY_SWEEP_INTERVAL_MS,
      onError: (err) => app.log.warn({ err }, "sweeping deleted statuses' history failed"),
    })
    historySweep.start()
    app.addHook('preClose', () => historySweep.close())
    // silences that turned stale are announced once each, whichever instance sees them first
    // (docs/notifications.md#staleness)
    const staleDetector = new StaleDetector({
      deps: { db: database.db, writer, events, clock, linkBase },
      intervalMs: options.staleCheckIntervalMs ?? STALE_CHECK_INTERVAL_MS,
      onError: (err) => app.log.warn({ err }, 'looking for stale statuses failed'),
    })
    app.decorate('staleDetector', staleDetector)
    app.addHook('onReady', async () => staleDetector.start())
    app.addHook('preClose', () => staleDetector.close())
    const services: ServiceDeps = {
      db: database.db,
      plans: app.plans,
      events,
      committed: (change) => app.renderedViews.invalidate(change.statusId),
      writer,
      historySweep,
      clock,
      linkBase,
    }
    app.decorate('services', services)

    // note: a fresh options object per plugin, as Fastify hands each its own
    const deps = () => ({ deps: services, publicUrl })
    app.keyedRoutes(statusRoutes, deps())
    app.keyedRoutes(sharingRoutes, deps())
    app.keyedRoutes(invitationRoutes, { ...deps(), linkBase, clock, mailer: app.mailer })
    app.keyedRoutes(historyRoutes, deps())
    app.keyedRoutes(searchRoutes, deps())
    app.keyedRoutes(shareLinkRoutes, deps())
    app.keyedRoutes(transferRoutes, { deps: services })
    // public views of public statuses: no API key is asked for (they declare `auth: 'none'`)
    await app.register(shareRoutes, { ...deps(), rendered: app.renderedViews })
    await app.register(invitationPreviewRoutes, { ...deps(), linkBase, clock })
    // a private share link's views: its token is the credential (docs/accounts.md#private-share-links)
    await app.register(shareLinkViewRoutes, deps())
  },
  { name: 'statuses', dependencies: ['core', 'keyed-api', 'live-updates', 'health'] },
)
