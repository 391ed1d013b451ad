import type { Transaction } from 'kysely'
import type { DB } from '../../db/database.ts'
import type { EventBus } from '../../lib/event-bus.ts'

/**
 * A key that stopped working (revoked, or rotated away at once), as the event bus carries
 * it: every instance that hears it forgets the key and ends its streams at once
 * (docs/postgres.md#live-updates-across-instances). On SQLite the bus is the process's own,
 * so a revocation by the CLI, another process, is caught by the periodic check instead
 * (events/stream-credentials.ts).
 */
export interface KeyRevocation {
  keyId: string
}

/** The bus key revocations travel on: one topic, its own channel between instances. */
export type KeyRevocationBus = EventBus<KeyRevocation, Transaction<DB>>

export const KEY_REVOCATION_TOPIC = 'revoked'

/** How key revocations travel on a bus: one topic, the `keys` channel, JSON between instances. */
export const KEY_REVOCATIONS = {
  channel: 'keys',
  topicOf: (_revocation: KeyRevocation): string => KEY_REVOCATION_TOPIC,
  parse(text: string | undefined): KeyRevocation | undefined {
    if (!text) return undefined
    try {
      const value = JSON.parse(text) as Partial<KeyRevocation> | null
      if (value && typeof value === 'object' && typeof value.keyId === 'string')
        return { keyId: value.keyId }
    } catch {
      // not JSON: not a revocation
    }
    return undefined
  },
}
