import { randomBytes } from 'node:crypto'
import mqtt, { type MqttClient } from 'mqtt'
import type { Clock } from '../../lib/clock.ts'
import { hashApiKey } from '../../lib/ids.ts'
import type { KeyCache } from '../keys/key-cache.ts'
import { authenticateHash } from '../keys/keys.service.ts'
import { satisfies } from '../keys/scopes.ts'
import type { ServiceDeps } from '../service-deps.ts'
import type { StatusChange } from '../statuses/status-events.ts'
import type { Status } from '../statuses/statuses.schemas.ts'
import { type Caller, getStatusById, listOwned } from '../statuses/statuses.service.ts'
import { assertEnabled, authLevelOf } from '../users/users.service.ts'

/** The bridge's settings (docs/integrations.md#broker-settings). */
export interface MqttSettings {
  /** MQTT_URL: `mqtt://` or `mqtts://`, with user and password if the broker asks. */
  url: string
  /** MQTT_API_KEY: the bridge sets and reads statuses as this key. */
  apiKey: string
  /** MQTT_PREFIX: the first level of every topic of the bridge. */
  prefix: string
  /** MQTT_PROTOCOL: MQTT 3.1.1 (4, what every broker speaks) or 5. */
  protocolVersion: 4 | 5
  /** MQTT_DISCOVERY: Home Assistant's discovery prefix; null: no discovery. */
  discovery: string | null
}

/** A request through the app's own routes (Fastify's `inject`): how the bridge writes. */
export type Inject = (request: {
  method: 'POST' | 'PUT'
  url: string
  headers: Record<string, string>
  payload: string
}) => Promise<{ statusCode: number; body: string }>

export interface MqttBridgeDeps {
  settings: MqttSettings
  inject: Inject
  services: ServiceDeps & { events: NonNullable<ServiceDeps['events']> }
  keyCache?: KeyCache
  clock: Clock
  log: {
    info(fields: object, message: string): void
    warn(fields: object, message: string): void
  }
  /** How often the reachable statuses are listed again (new ones, ones out of reach). */
  reconcileMs?: number
  /** The first reconnect's delay; each next one doubles, up to `reconnectMaxMs`. */
  reconnectMinMs?: number
  reconnectMaxMs?: number
}

/** How often the statuses the key reaches are listed again. */
export const RECONCILE_MS = 5_000
/** Every this many listings, every reachable status is read again (a change the bus lost). */
const FULL_CHECK_EVERY = 12
/** Sets waiting for their write, beyond which a set is refused at once. */
export const MAX_PENDING_SETS = 1_000
/** Statuses waiting to be published, beyond which the bridge republishes them all instead. */
export const MAX_PENDING_PUBLISHES = 10_000
/** Longest a stop waits for the broker to take the bridge's `offline`. */
const STOP_WAIT_MS = 2_000
const RECONNECT_MIN_MS = 1_000
const RECONNECT_MAX_MS = 60_000

/** What the bridge last published for a status, to clear it when it goes out of reach. */
interface Published {
  key: string
  etag: string
  /** The discovery configs as published (their topic → payload). */
  configs: Map<string, string>
}

/** A refusal as the bridge publishes it on `…/error`. */
interface Refusal {
  errorCode: string
  message: string
}

const refusalOf = (statusCode: number, body: string): Refusal => {
  try {
    const parsed = JSON.parse(body) as Partial<Refusal>
    if (typeof parsed.errorCode === 'string' && typeof parsed.message === 'string')
      return { errorCode: parsed.errorCode, message: parsed.message }
  } catch {
    // not the API's error body: described by its status below
  }
  return { errorCode: 'internalError', message: `The write failed (${statusCode})` }
}

/**
 * The MQTT bridge of one instance (docs/integrations.md): it takes sets from
 * `<prefix>/<statusKey>/set` and writes them through the API's own routes, as its key (the same
 * validation, scopes and confined statuses as over HTTP), answers refusals on `…/error`, and
 * publishes every change of a status the key reaches, retained, on `…/state` and `…/json`,
 * with Home Assistant's discovery configs. Changes come from the bus the live streams read;
 * what waits to be published is one entry per status (its latest state), so a broker that is
 * slow or down never holds up a write, and the queue stays bounded.
 */
export class MqttBridge {
  readonly #deps: MqttBridgeDeps
  readonly #settings: MqttSettings
  readonly #reconcileMs: number
  readonly #reconnectMinMs: number
  readonly #reconnectMaxMs: number
  readonly #bridgeTopic: string
  #client: MqttClient | undefined
  #stopped = false
  #reconnects = 0
  #reconnectTimer: NodeJS.Timeout | undefined
  #reconcileTimer: NodeJS.Timeout | undefined
  #reconciles = 0
  #reconciling = false
  /** The statuses the key reaches, by id: their key, and what was published of them. */
  readonly #reachable = new Map<string, string>()
  readonly #published = new Map<string, Published>()
  readonly #unsubscribe = new Map<string, () => void>()
  /** Statuses to publish (true: even if unchanged), drained by one loop. */
  readonly #pending = new Map<string, boolean>()
  #draining: Promise<void> | undefined
  #republishAll = false
  /** Sets being written, chained per status key so that each key's sets land in order. */
  readonly #chains = new Map<string, Promise<void>>()
  #pendingSets = 0
  #connected = false

  constructor(deps: MqttBridgeDeps) {
    this.#deps = deps
    this.#settings = deps.settings
    this.#reconcileMs = deps.reconcileMs ?? RECONCILE_MS
    this.#reconnectMinMs = deps.reconnectMinMs ?? RECONNECT_MIN_MS
    this.#reconnectMaxMs = deps.reconnectMaxMs ?? RECONNECT_MAX_MS
    this.#bridgeTopic = `${this.#settings.prefix}/bridge/state`
  }

  /** Connects (and keeps reconnecting) to the broker. */
  start(): void {
    const { prefix } = this.#settings
    const client = mqtt.connect(this.#settings.url, {
      clientId: `statusd-${randomBytes(6).toString('hex')}`,
      protocolVersion: this.#settings.protocolVersion,
      // reconnects are scheduled here, with a growing delay
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      // what is not sent while disconnected is dropped: the state is republished on reconnect
      queueQoSZero: false,
      will: { topic: this.#bridgeTopic, payload: Buffer.from('offline'), qos: 1, retain: true },
    })
    this.#client = client
    client.on('connect', () => {
      // a connection that completed while the bridge stopped: it is being ended
      if (this.#stopped) return
      this.#connected = true
      this.#reconnects = 0
      this.#deps.log.info({ broker: describeMqttUrl(this.#settings.url) }, 'MQTT bridge connected')
      this.#publish(this.#bridgeTopic, 'online', true)
      client.subscribe(`${prefix}/+/set`, { qos: 1 })
      // what the broker holds may be gone (a broker without persistence): all of it again
      this.#republishAll = true
      void this.#reconcile()
    })
    client.on('message', (topic, payload) => this.#message(topic, payload))
    client.on('error', (err) =>
      this.#deps.log.warn(
        { err: { message: err.message, code: (err as { code?: unknown }).code } },
        'MQTT bridge: broker error',
      ),
    )
    client.on('close', () => {
      const was = this.#connected
      this.#connected = false
      if (was) this.#deps.log.warn({}, 'MQTT bridge disconnected; reconnecting')
      this.#scheduleReconnect()
    })
    this.#reconcileTimer = setInterval(() => void this.#reconcile(), this.#reconcileMs)
    this.#reconcileTimer.unref()
  }

  #scheduleReconnect(): void {
    if (this.#stopped || this.#reconnectTimer !== undefined) return
    const delay = reconnectDelayMs(
      this.#reconnects,
      { minMs: this.#reconnectMinMs, maxMs: this.#reconnectMaxMs },
      Math.random(),
    )
    this.#reconnects++
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined
      if (!this.#stopped) this.#client?.reconnect()
    }, delay)
    this.#reconnectTimer.unref()
  }

  /** A message on `<prefix>/<statusKey>/set`: the set is written in its key's turn. */
  #message(topic: string, payload: Buffer): void {
    const { prefix } = this.#settings
    if (this.#stopped || !topic.startsWith(`${prefix}/`) || !topic.endsWith('/set')) return
    const key = topic.slice(prefix.length + 1, -'/set'.length)
    if (key.includes('/')) return
    if (this.#pendingSets >= MAX_PENDING_SETS) {
      this.#publishError(key, {
        errorCode: 'tooManyRequests',
        message: 'The bridge has too many sets waiting; try again shortly',
      })
      return
    }
    this.#pendingSets++
    const text = payload.toString('utf8')
    const previous = this.#chains.get(key) ?? Promise.resolve()
    const next = previous
      .then(() => this.#set(key, text))
      .catch((err: unknown) =>
        this.#deps.log.warn({ err, statusKey: key }, 'MQTT bridge: a set failed'),
      )
      .finally(() => {
        this.#pendingSets--
        if (this.#chains.get(key) === next) this.#chains.delete(key)
      })
    this.#chains.set(key, next)
  }

  /**
   * Writes one set through the API's route: a JSON object as the POST by key takes it, any
   * other payload as the value in plain text (docs/integrations.md#topics).
   */
  async #set(key: string, text: string): Promise<void> {
    const path = `/v1/status-keys/${encodeURIComponent(key)}`
    const json = text.trimStart().startsWith('{')
    const response = await this.#deps.inject({
      method: json ? 'POST' : 'PUT',
      url: json ? path : `${path}/value`,
      headers: {
        'service-api-key': this.#settings.apiKey,
        'content-type': json ? 'application/json' : 'text/plain; charset=utf-8',
      },
      payload: text,
    })
    if (response.statusCode >= 400) {
      this.#publishError(key, refusalOf(response.statusCode, response.body))
      return
    }
    // a status the set created: known at once, not at the next listing
    const status = JSON.parse(response.body) as Status
    if (!this.#reachable.has(status.id)) this.#watch(status.id, key)
    this.#enqueue(status.id, false)
  }

  #publishError(key: string, refusal: Refusal): void {
    if (!this.#connected) return
    this.#publish(`${this.#settings.prefix}/${key}/error`, JSON.stringify(refusal), false)
  }

  /** The caller the key stands for, when it may read statuses; null: it reaches none. */
  async #caller(): Promise<Caller | null> {
    const found = await authenticateHash(
      this.#deps.services.db,
      hashApiKey(this.#settings.apiKey),
      this.#deps.keyCache,
    )
    if (!found) return null
    try {
      assertEnabled(found.user)
    } catch {
      return null
    }
    if (authLevelOf(found.user) !== 'verified') return null
    if (!satisfies(found.limits.scopes, 'status:read')) return null
    return {
      userId: found.user.id,
      plan: found.user.plan,
      limits: found.limits,
      keyId: found.keyId,
    }
  }

  /** Starts following a status's changes on the bus. */
  #watch(statusId: string, key: string): void {
    this.#reachable.set(statusId, key)
    if (this.#unsubscribe.has(statusId)) return
    this.#unsubscribe.set(
      statusId,
      this.#deps.services.events.subscribe(statusId, (change: StatusChange) =>
        this.#enqueue(change.statusId, false),
      ),
    )
  }

  #unwatch(statusId: string): void {
    this.#reachable.delete(statusId)
    this.#unsubscribe.get(statusId)?.()
    this.#unsubscribe.delete(statusId)
  }

  /**
   * Lists the statuses the key reaches again: new ones are followed and published, those out
   * of reach (deleted, key confined elsewhere, key revoked) have their topics cleared.
   */
  async #reconcile(): Promise<void> {
    // one listing at a time: on slow storage the timer does not pile them up; none while
    // the broker is away, since the connection lists them all again when it comes
    if (this.#stopped || this.#reconciling || !this.#connected) return
    this.#reconciling = true
    try {
      await this.#listReachable()
    } finally {
      this.#reconciling = false
    }
  }

  async #listReachable(): Promise<void> {
    let caller: Caller | null
    let listed: Map<string, string>
    try {
      caller = await this.#caller()
      listed = new Map()
      if (caller !== null) {
        const page = await listOwned(this.#deps.services, caller, {})
        for (const entry of page.items)
          if (entry.statusKey !== null) listed.set(entry.statusId, entry.statusKey)
      }
    } catch (err) {
      // storage did not answer: nothing is cleared on a guess, the next listing tries again
      this.#deps.log.warn({ err }, 'MQTT bridge: listing the statuses failed')
      return
    }
    if (this.#stopped) return
    const full = this.#republishAll || this.#reconciles % FULL_CHECK_EVERY === 0
    const force = this.#republishAll
    this.#republishAll = false
    this.#reconciles++
    for (const statusId of [...this.#reachable.keys()])
      if (!listed.has(statusId)) {
        this.#unwatch(statusId)
        this.#enqueue(statusId, false)
      }
    for (const [statusId, key] of listed) {
      const known = this.#reachable.has(statusId)
      this.#watch(statusId, key)
      if (!known || full) this.#enqueue(statusId, force)
    }
    // published once but in no listing since (this instance restarted meanwhile is not known)
    for (const statusId of this.#published.keys())
      if (!listed.has(statusId)) this.#enqueue(statusId, false)
  }

  #enqueue(statusId: string, force: boolean): void {
    if (this.#stopped) return
    if (this.#pending.size >= MAX_PENDING_PUBLISHES && !this.#pending.has(statusId)) {
      // too much waits: drop it all, and publish everything again from the next listing
      this.#pending.clear()
      this.#republishAll = true
      return
    }
    this.#pending.set(statusId, force || this.#pending.get(statusId) === true)
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined
    })
  }

  async #drain(): Promise<void> {
    while (this.#pending.size > 0 && !this.#stopped) {
      const [statusId, force] = this.#pending.entries().next().value as [string, boolean]
      this.#pending.delete(statusId)
      try {
        await this.#publishStatus(statusId, force)
      } catch (err) {
        this.#deps.log.warn({ err, statusId }, 'MQTT bridge: publishing a status failed')
      }
    }
  }

  /** Publishes a status's current state, or clears its topics when it is out of reach. */
  async #publishStatus(statusId: string, force: boolean): Promise<void> {
    if (!this.#connected) return
    const key = this.#reachable.get(statusId)
    let status: Status | undefined
    let etag: string | undefined
    if (key !== undefined) {
      const caller = await this.#caller()
      if (caller !== null) {
        try {
          ;({ status, etag } = await getStatusById(this.#deps.services, caller, statusId))
        } catch (err) {
          if ((err as { statusCode?: number }).statusCode !== 404) throw err
        }
      }
    }
    const before = this.#published.get(statusId)
    if (status === undefined || etag === undefined) {
      if (before !== undefined) this.#clear(statusId, before)
      return
    }
    const ownKey = status.statusKey ?? (key as string)
    if (before !== undefined && before.key !== ownKey) this.#clear(statusId, before)
    const previous = this.#published.get(statusId)
    if (!force && previous?.etag === etag) return
    const topic = `${this.#settings.prefix}/${ownKey}`
    this.#publish(`${topic}/state`, status.value ?? '', true)
    this.#publish(`${topic}/json`, JSON.stringify(status), true)
    const configs = this.#discoveryConfigs(status, ownKey)
    for (const [configTopic, payload] of configs)
      if (force || previous?.configs.get(configTopic) !== payload)
        this.#publish(configTopic, payload, true)
    for (const configTopic of previous?.configs.keys() ?? [])
      if (!configs.has(configTopic)) this.#publish(configTopic, '', true)
    this.#published.set(statusId, { key: ownKey, etag, configs })
  }

  /**
   * Publishes at QoS 1 without waiting: nothing while disconnected or stopping (the state is
   * published again on the next connect), and a client that refuses is logged, never thrown.
   */
  #publish(topic: string, payload: string, retain: boolean): void {
    if (this.#stopped || !this.#connected || this.#client === undefined) return
    try {
      this.#client.publish(topic, payload, { qos: 1, retain })
    } catch (err) {
      this.#deps.log.warn({ err, topic }, 'MQTT bridge: a publish failed')
    }
  }

  /** Empty retained messages: the broker forgets the status's state and Home Assistant its entities. */
  #clear(statusId: string, published: Published): void {
    const topic = `${this.#settings.prefix}/${published.key}`
    this.#publish(`${topic}/state`, '', true)
    this.#publish(`${topic}/json`, '', true)
    for (const configTopic of published.configs.keys()) this.#publish(configTopic, '', true)
    this.#published.delete(statusId)
  }

  /**
   * Home Assistant's discovery configs of a status (docs/integrations.md#home-assistant): a
   * sensor, and a select of its palette's values when it has one; none without discovery.
   */
  #discoveryConfigs(status: Status, key: string): Map<string, string> {
    const configs = new Map<string, string>()
    const discovery = this.#settings.discovery
    if (discovery === null) return configs
    const topic = `${this.#settings.prefix}/${key}`
    const common = {
      device: { identifiers: ['statusd'], name: 'statusd' },
      availability_topic: this.#bridgeTopic,
      payload_available: 'online',
      payload_not_available: 'offline',
      state_topic: `${topic}/state`,
      json_attributes_topic: `${topic}/json`,
    }
    const id = `statusd_${status.id}`
    configs.set(
      `${discovery}/sensor/${id}/config`,
      JSON.stringify({ name: status.name, unique_id: id, ...common }),
    )
    if (status.palette.length > 0)
      configs.set(
        `${discovery}/select/${id}/config`,
        JSON.stringify({
          name: status.name,
          unique_id: `${id}_select`,
          command_topic: `${topic}/set`,
          options: status.palette.map((entry) => entry.value),
          ...common,
        }),
      )
    return configs
  }

  /**
   * Stops: the bridge's state reads `offline`, the connection closes, and nothing more is
   * published. What was published stays retained for the instance that takes over.
   */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#reconcileTimer)
    clearTimeout(this.#reconnectTimer)
    for (const unsubscribe of this.#unsubscribe.values()) unsubscribe()
    this.#unsubscribe.clear()
    this.#pending.clear()
    // sets already taken are written: their devices were not told otherwise
    await Promise.allSettled([...this.#chains.values()])
    await this.#draining
    const client = this.#client
    if (client === undefined) return
    const connected = this.#connected
    this.#connected = false
    if (connected) {
      // the broker's acknowledgement, or at most STOP_WAIT_MS: a broker that went away
      // meanwhile must not hold up the shutdown
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        new Promise<void>((resolve) =>
          client.publish(this.#bridgeTopic, 'offline', { qos: 1, retain: true }, () => resolve()),
        ),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, STOP_WAIT_MS)
        }),
      ])
      clearTimeout(timer)
    }
    await client.endAsync(true)
  }
}

/**
 * How long to wait before reconnect number `attempt` (0 first): doubling from `minMs`, capped
 * at `maxMs`, and spread over its upper half by `random` (in [0, 1)) so that instances that
 * lost the same broker do not all come back at the same moment.
 */
export function reconnectDelayMs(
  attempt: number,
  { minMs, maxMs }: { minMs: number; maxMs: number },
  random: number,
): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30))
  return ceiling / 2 + random * (ceiling / 2)
}

/** The broker's URL as it may be logged: without user and password. */
export function describeMqttUrl(url: string): string {
  const parsed = URL.parse(url)
  if (parsed === null) return 'the MQTT broker'
  return `${parsed.protocol}//${parsed.host}`
}
