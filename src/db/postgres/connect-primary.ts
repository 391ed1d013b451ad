import type pg from 'pg'
import type { PostgresUrl } from './postgres-url.ts'

// Connecting to whichever host of a multi-host URL is the primary, as libpq does with
// `target_session_attrs=read-write` (docs/postgres.md#failover); `pg` itself connects to one
// host. The pool builds its connections from a pg Client class; this one, before it connects,
// asks a PrimaryLocator which host takes writes, connects there and checks. The locator
// remembers the answer, so in the steady state a new connection costs one extra round trip
// (`SHOW transaction_read_only`); only when that host fails does it try the hosts again, in
// the URL's order, each with a short-lived connection of its own.

/** No host of the URL is a server statusd can use now: 503, like a refused connection. */
export class NoPrimaryError extends AggregateError {
  // SQLSTATE 08001, "unable to establish connection" (libpq's own answer here): class 08 is
  // "unavailable" (postgres-engine.ts), so requests get 503 with Retry-After
  readonly code = '08001'
}

/** A host answered, but as a standby (or a read-only server): not where writes go. */
export class ReadOnlyHostError extends Error {}

interface Address {
  host: string
  port: number
}

/** Which host is the primary, as far as the last connections found. */
export class PrimaryLocator {
  readonly #target: PostgresUrl
  readonly #probe: (index: number) => Promise<void>
  #current: number | undefined
  #finding: Promise<number> | undefined
  readonly #live = new Set<pg.Client>()

  constructor(target: PostgresUrl, probe: (index: number) => Promise<void>) {
    this.#target = target
    this.#probe = probe
  }

  /** The index of the host to connect to; looked for (once, however many ask) when unknown. */
  primary(): Promise<number> {
    if (this.#current !== undefined) return Promise.resolve(this.#current)
    this.#finding ??= this.#find().finally(() => {
      this.#finding = undefined
    })
    return this.#finding
  }

  async #find(): Promise<number> {
    const errors: unknown[] = []
    for (const [index, host] of this.#target.hosts.entries()) {
      try {
        await this.#probe(index)
        this.#current = index
        return index
      } catch (err) {
        // which host failed how, for the log line of the 503
        errors.push(err instanceof Error ? Object.assign(err, { host: host.label }) : err)
      }
    }
    throw new NoPrimaryError(
      errors,
      this.#target.sessionAttrs === 'read-write'
        ? 'no host of the database URL takes writes now'
        : 'no host of the database URL accepts connections now',
    )
  }

  /** A connection to this host failed: look again next time. */
  forget(index: number): void {
    if (this.#current === index) this.#current = undefined
  }

  /** A connection is up; kept until it ends, so that it can be dropped. */
  track(client: pg.Client): void {
    this.#live.add(client)
    client.once('end', () => this.#live.delete(client))
  }

  /**
   * A host turned out to be read-only (a write was refused with 25006, or a new connection
   * found `transaction_read_only` on): forget the current host and drop every connection
   * still open to a host, so that each is replaced by one to the primary.
   */
  readOnlySeen(): void {
    this.#current = undefined
    const err = new ReadOnlyHostError('the server no longer takes writes: connection dropped')
    for (const client of this.#live) drop(client, err)
    this.#live.clear()
  }
}

/**
 * Drops a connection as a server shutting down would, but at once: its 'error' makes the pool
 * take an idle connection out before anyone is handed it (pg-pool listens for it), the LISTEN
 * connection reconnect; the socket's end fails a query in flight, and the pool drops that
 * connection when it is released.
 */
function drop(client: pg.Client, err: Error): void {
  client.emit('error', err)
  ;(
    client as unknown as { connection?: { stream?: { destroy(): void } } }
  ).connection?.stream?.destroy()
}

/** True when the server says the session is read-only (`SHOW transaction_read_only`). */
async function isReadOnly(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ transaction_read_only: string }>(
    'show transaction_read_only',
  )
  return rows[0]?.transaction_read_only !== 'off'
}

/**
 * The pg Client class of a multi-host URL (or a single host with
 * `target_session_attrs=read-write`) and its locator. Every client of the class, pooled or
 * dedicated (the LISTEN connection), connects to the host the locator names, with the
 * settings it is constructed with; `config` is the rest of those settings, for the probes.
 */
export function primaryClientClass(
  Client: typeof pg.Client,
  target: PostgresUrl,
  config: pg.ClientConfig,
): { PrimaryClient: typeof pg.Client; locator: PrimaryLocator } {
  const readWrite = target.sessionAttrs === 'read-write'
  // host and port of each, as pg reads them from the host's own URL (sockets, IPv6, defaults)
  const addresses: Address[] = target.hosts.map(({ url }) => {
    const parsed = new Client({ connectionString: url })
    return { host: parsed.host, port: parsed.port }
  })
  const probe = async (index: number) => {
    const client = new Client({ ...config, connectionString: target.hosts[index]?.url })
    client.on('error', () => {})
    try {
      await client.connect()
      if (readWrite && (await isReadOnly(client)))
        throw new ReadOnlyHostError('the server is read-only (a standby)')
    } finally {
      await client.end().catch(() => {})
    }
  }
  const locator = new PrimaryLocator(target, probe)

  class PrimaryClient extends Client {
    // pg's two forms: a promise of the client, or a callback (pg-pool's)
    override connect(): Promise<pg.Client>
    override connect(callback: (err: Error) => void): void
    override connect(callback?: (err: Error) => void): Promise<pg.Client> | undefined {
      const connecting = this.#connectToPrimary().then(() => this as pg.Client)
      if (!callback) return connecting
      // note: pg calls back with no error on success
      connecting.then(() => callback(undefined as unknown as Error), callback)
      return undefined
    }

    async #connectToPrimary(): Promise<void> {
      const index = await locator.primary()
      // note: the pool's connect timeout may have run out while the hosts were tried: it
      // destroys the socket this client would connect with; the pool has given up on it
      const stream = (this as unknown as { connection: { stream: { destroyed: boolean } } })
        .connection.stream
      if (stream.destroyed)
        throw new Error('Connection terminated: timeout while finding the primary')
      const address = addresses[index] as Address
      // note: the client was built before the host was known (the pool builds it, then
      // connects it); nothing has used these yet
      this.host = address.host
      this.port = address.port
      const parameters = (this as unknown as { connectionParameters: Address }).connectionParameters
      parameters.host = address.host
      parameters.port = address.port
      // a connection died (the pool or the LISTEN connection see that too): look again
      this.on('error', () => locator.forget(index))
      try {
        await super.connect()
      } catch (err) {
        locator.forget(index)
        throw err
      }
      if (readWrite) {
        let readOnly: boolean
        try {
          readOnly = await isReadOnly(this)
        } catch (err) {
          locator.forget(index)
          await this.end().catch(() => {})
          throw err
        }
        if (readOnly) {
          locator.readOnlySeen()
          await this.end().catch(() => {})
          throw new NoPrimaryError(
            [new ReadOnlyHostError('the server is read-only (a standby)')],
            `${target.hosts[index]?.label} no longer takes writes`,
          )
        }
      }
      locator.track(this)
    }
  }
  return { PrimaryClient: PrimaryClient as unknown as typeof pg.Client, locator }
}
