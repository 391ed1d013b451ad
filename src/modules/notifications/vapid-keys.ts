import { generateKeyPairSync } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { DB } from '../../db/database.ts'
import { type Clock, systemClock } from '../../lib/clock.ts'
import { findSetting, insertSettingIfAbsent } from './service-settings.repository.ts'

// The service's VAPID key pair (docs/notifications.md#browser-push): browsers bind a push
// subscription to the public key, so it is made once, at first start, and kept in
// service_settings; a new key pair would orphan every subscription.

/** The service_settings row that holds the pair. */
export const VAPID_SETTING = 'vapid'

export interface VapidKeyPair {
  /** The uncompressed P-256 public key, base64url (what `applicationServerKey` takes). */
  publicKey: string
  /** The private key, base64url; never leaves the service. */
  privateKey: string
}

const isPair = (value: unknown): value is VapidKeyPair =>
  typeof (value as VapidKeyPair)?.publicKey === 'string' &&
  typeof (value as VapidKeyPair)?.privateKey === 'string'

/**
 * A fresh P-256 pair in web-push's form (what its `generateVAPIDKeys` makes), from node:crypto:
 * web-push, with its ASN.1 and big-number libraries, then loads only to send a push
 * (docs/performance.md#cold-start-and-memory). JWK coordinates are always 32 bytes.
 */
export function newVapidKeyPair(): VapidKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const { x, y } = publicKey.export({ format: 'jwk' })
  const { d } = privateKey.export({ format: 'jwk' })
  const point = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(x as string, 'base64url'),
    Buffer.from(y as string, 'base64url'),
  ])
  return { publicKey: point.toString('base64url'), privateKey: d as string }
}

/** The key pair, made on first use and read once per process. */
export class VapidKeys {
  readonly #db: Kysely<DB>
  readonly #clock: Clock
  #pair: Promise<VapidKeyPair> | undefined

  constructor(db: Kysely<DB>, clock: Clock = systemClock) {
    this.#db = db
    this.#clock = clock
  }

  /**
   * The pair: a fresh one is offered, and whichever was stored first is kept (insert if
   * absent, then read back), so instances starting together on one database agree.
   */
  get(): Promise<VapidKeyPair> {
    this.#pair ??= this.#load().catch((err: unknown) => {
      // a failure (storage down at start) is tried again on next use
      this.#pair = undefined
      throw err
    })
    return this.#pair
  }

  async #load(): Promise<VapidKeyPair> {
    const stored = JSON.parse(
      (await findSetting(this.#db, VAPID_SETTING)) ??
        (await insertSettingIfAbsent(
          this.#db,
          VAPID_SETTING,
          JSON.stringify(newVapidKeyPair()),
          new Date(this.#clock.now()).toISOString(),
        )),
    ) as unknown
    if (!isPair(stored)) throw new Error('service_settings holds a malformed VAPID key pair')
    return stored
  }
}

/**
 * The VAPID `sub` claim: how a push service reaches the operator. The public https URL when
 * there is one, else the sender address of the service's mail, else a placeholder.
 */
export function vapidSubject(publicUrl: string | null, mailFrom: string | null): string {
  const url = publicUrl ? URL.parse(publicUrl) : null
  if (url && url.protocol === 'https:' && url.hostname !== 'localhost') return url.origin
  const address = mailFrom?.match(/<([^<>\s]+@[^<>\s]+)>/)?.[1] ?? mailFrom?.trim()
  if (address && /^[^\s@<>]+@[^\s@<>]+$/.test(address)) return `mailto:${address}`
  return 'mailto:statusd@localhost'
}
