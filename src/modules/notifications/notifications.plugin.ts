import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { OutboundClient, type OutboundOptions, parseNetworks } from '../../lib/outbound.ts'
import { makeChannelTypes, type ServiceUrls } from './channel-registry.ts'
import { channelRoutes } from './channels.routes.ts'
import type { ChannelDeps } from './channels.service.ts'
import { DeliveryWorker, type DeliveryWorkerOptions } from './delivery-worker.ts'
import { channelConfirmationState, confirmEmailChannel } from './email-channel.ts'
import { ruleRoutes } from './rules.routes.ts'
import { VapidKeys, vapidSubject } from './vapid-keys.ts'
import { webpushRoutes } from './webpush.routes.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The notification delivery worker (docs/notifications.md#delivery). */
    deliveryWorker: DeliveryWorker
    /** E-mail channels' confirmation links (docs/notifications.md#e-mail), for their page. */
    channelConfirmations: {
      state(token: string): ReturnType<typeof channelConfirmationState>
      confirm(token: string): ReturnType<typeof confirmEmailChannel>
    }
  }
}

export interface NotificationsOptions {
  /**
   * Networks webhooks may reach although they are private (WEBHOOK_ALLOW_NETWORKS: CIDR
   * ranges; docs/notifications.md#outbound-safety). Default: none.
   */
  webhookAllowNetworks?: readonly string[]
  /**
   * The VAPID `sub` claim push services see (docs/notifications.md#browser-push). Default:
   * the public https URL, else a mailto: placeholder.
   */
  vapidSubject?: string
  /**
   * The delivery worker (docs/notifications.md#delivery). It starts when the app listens,
   * unless `autoStart` is false (tests then run its passes themselves: `app.deliveryWorker`).
   */
  notifications?: {
    autoStart?: boolean
    /** Overrides of the outbound client (tests shorten the timeout, answer DNS). */
    outbound?: Omit<OutboundOptions, 'allowNetworks'>
    /** Pushover's and Telegram's API at another address (tests: a local receiver). */
    serviceUrls?: ServiceUrls
  } & Pick<
    DeliveryWorkerOptions,
    'concurrency' | 'claimBatch' | 'pollMs' | 'random' | 'leaseMs' | 'fanOutBatch'
  >
}

/**
 * Notifications (docs/notifications.md): channels, rules and browser push, and the worker
 * that delivers what writes recorded in the outbox. Every request to an address a user gave
 * goes through the guarded client. A new channel type is its own file and one line in
 * channel-registry.ts.
 */
export const notifications = fp(
  async (app: FastifyInstance, options: NotificationsOptions) => {
    const { database, clock, linkBase, mailer, writer } = app
    const {
      autoStart = true,
      outbound: outboundOptions,
      serviceUrls,
      ...workerOptions
    } = options.notifications ?? {}
    const outbound = new OutboundClient({
      ...outboundOptions,
      allowNetworks: parseNetworks((options.webhookAllowNetworks ?? []).join(',')),
    })
    // browser push (docs/notifications.md#browser-push): the VAPID key pair, made at first start
    const vapidKeys = new VapidKeys(database.db, clock)
    app.addHook('onReady', async () => {
      await vapidKeys
        .get()
        .catch((err: unknown) =>
          app.log.warn({ err }, 'browser push: the VAPID key pair could not be read or made yet'),
        )
    })
    const channelTypes = makeChannelTypes({
      db: database.db,
      clock,
      mailer,
      outbound,
      vapid: vapidKeys,
      vapidSubject: options.vapidSubject ?? vapidSubject(app.publicUrl, null),
      ...(serviceUrls && { serviceUrls }),
    })
    const deliveryWorker = new DeliveryWorker({
      ...workerOptions,
      types: channelTypes,
      db: database.db,
      writer,
      clock,
      publicUrl: linkBase,
      log: app.log,
      mailer,
    })
    app.decorate('deliveryWorker', deliveryWorker)
    if (autoStart) app.addHook('onListen', async () => deliveryWorker.start())
    // before storage closes: the sends in flight settle (each bounded by its timeout)
    app.addHook('preClose', async () => {
      await deliveryWorker.close()
      await outbound.close()
    })
    app.decorate('channelConfirmations', {
      state: (token: string) => channelConfirmationState(database.db, clock, token),
      confirm: (token: string) => confirmEmailChannel(database.db, clock, token),
    })

    const channels: ChannelDeps = {
      db: database.db,
      writer,
      clock,
      types: channelTypes,
      sendContext: () => ({ publicUrl: linkBase() }),
      onEvent: () => deliveryWorker.kick(),
    }
    app.keyedRoutes(webpushRoutes, { keys: vapidKeys })
    app.keyedRoutes(channelRoutes, { deps: channels })
    app.keyedRoutes(ruleRoutes, { deps: app.services })
  },
  { name: 'notifications', dependencies: ['core', 'keyed-api', 'health', 'statuses'] },
)
