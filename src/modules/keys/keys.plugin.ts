import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { KeyCache } from './key-cache.ts'
import { KEY_REVOCATION_TOPIC, KEY_REVOCATIONS, type KeyRevocationBus } from './key-revocations.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Keys recently authenticated (AUTH_CACHE_SECONDS). */
    keyCache: KeyCache
    /** Where a revoked key, a changed user or ended sessions are told to every instance. */
    revocations: KeyRevocationBus
  }
}

export interface KeysOptions {
  /** How long an authenticated key is trusted without a lookup (0 disables the cache). */
  keyCacheTtlMs?: number
}

/**
 * The key cache authentication reads, and the bus that tells every instance what was revoked
 * (docs/api.md#authentication): a key revoked anywhere (another instance, the CLI: on
 * PostgreSQL through NOTIFY) is forgotten at once, and after a gap in delivery, every key.
 * Register before the route policies, whose authentication reads the cache.
 */
export const keys = fp(
  async (app: FastifyInstance, options: KeysOptions) => {
    const keyCache = new KeyCache({ ttlMs: options.keyCacheTtlMs ?? 5_000, clock: app.clock })
    const revocations: KeyRevocationBus = await app.database.openEventBus({
      ...KEY_REVOCATIONS,
      log: app.log,
      onListenerError: (err) => app.log.error({ err }, 'a key revocation listener failed'),
    })
    revocations.subscribe(KEY_REVOCATION_TOPIC, (change) => {
      if ('keyId' in change) keyCache.forgetKey(change.keyId)
      else if ('userId' in change) keyCache.forgetUser(change.userId)
    })
    revocations.onResync?.(() => keyCache.clear())
    app.decorate('keyCache', keyCache)
    app.decorate('revocations', revocations)
    app.addHook('onClose', () => revocations.close())
  },
  { name: 'keys', dependencies: ['core'] },
)
