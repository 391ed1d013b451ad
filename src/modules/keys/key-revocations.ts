import type { EventBus } from '../../lib/event-bus.ts'

/**
 * A key that stopped working (revoked, or rotated away at once), as the event bus carries
 * it: every instance that hears it forgets the key and ends its streams at once
 * (docs/postgres.md#live-updates-across-instances).
 */
export interface KeyRevocation {
  keyId: string
}

/**
 * A user whose standing changed (unverified, a new address, another plan): every instance
 * forgets the keys of the user it has cached, and checks the streams it holds open.
 */
export interface UserChange {
  userId: string
}

/** Sessions that ended (signed out, revoked, ended by a password change): their streams end. */
export interface SessionsEnd {
  sessionIds: string[]
}

/**
 * What the credentials bus carries: a credential, or a user's standing, that changed.
 * On SQLite the bus is the process's own; a change by the CLI, another process, is caught
 * by the engine's check for commits of other processes instead (the bus's resync).
 */
export type CredentialChange = KeyRevocation | UserChange | SessionsEnd

/** The bus credential changes travel on: one topic, its own channel between instances. */
export type KeyRevocationBus = EventBus<CredentialChange>

export const KEY_REVOCATION_TOPIC = 'revoked'

const isIdList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((id) => typeof id === 'string')

/** How credential changes travel on a bus: one topic, the `keys` channel, JSON between instances. */
export const KEY_REVOCATIONS = {
  channel: 'keys',
  topicOf: (_change: CredentialChange): string => KEY_REVOCATION_TOPIC,
  parse(text: string | undefined): CredentialChange | undefined {
    if (!text) return undefined
    try {
      const value = JSON.parse(text) as Record<string, unknown> | null
      if (!value || typeof value !== 'object') return undefined
      if (typeof value.keyId === 'string') return { keyId: value.keyId }
      if (typeof value.userId === 'string') return { userId: value.userId }
      if (isIdList(value.sessionIds)) return { sessionIds: [...value.sessionIds] }
    } catch {
      // not JSON: not a change
    }
    return undefined
  },
}
