import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { performance } from 'node:perf_hooks'
import ipaddr from 'ipaddr.js'
import type { Agent } from 'undici'

// The one HTTP client that calls addresses users name (webhooks; docs/notifications.md#outbound-safety).
// A URL a user gives could point at the service's own network (a database, a cloud metadata
// endpoint, a router's admin page): server-side request forgery. So every connection resolves
// the host itself, refuses the whole answer if any address is private, loopback, link-local,
// shared (CGNAT), multicast, reserved or the metadata address, unless the operator allowed its
// network (WEBHOOK_ALLOW_NETWORKS), and connects to the very address it checked: a name that
// resolves to a public address for the check and a private one for the connection (DNS
// rebinding) cannot slip through. No redirect is followed, the whole exchange is bounded in
// time, and at most a small part of the answer is read.

/** The whole exchange (resolve, connect, send, answer): bounded, so a slow receiver holds nothing long. */
export const OUTBOUND_TIMEOUT_MS = 5_000
/** At most this much of an answer is read; the rest is dropped with the connection. */
export const OUTBOUND_MAX_RESPONSE_BYTES = 64 * 1024

/** A network given as CIDR, parsed once. */
export type Network = [ipaddr.IPv4 | ipaddr.IPv6, number]

/**
 * Parses a comma-separated list of CIDR ranges (`127.0.0.0/8, fd00::/8`); a bare address is
 * its own /32 or /128. Throws with the entry that is not one.
 */
export function parseNetworks(text: string): Network[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry): Network => {
      try {
        if (entry.includes('/')) return ipaddr.parseCIDR(entry)
        const address = ipaddr.parse(entry)
        return [address, address.kind() === 'ipv4' ? 32 : 128]
      } catch {
        throw new Error(`not a CIDR range or an address: "${entry}"`)
      }
    })
}

/** An address written as IPv6 in one of the forms that carry an IPv4 address in their last 32 bits. */
const IPV4_EMBEDDING: readonly Network[] = [
  // IPv4-mapped: the IPv4 address itself, to a dual-stack socket
  ipaddr.parseCIDR('::ffff:0:0/96'),
  // IPv4-translated (SIIT)
  ipaddr.parseCIDR('::ffff:0:0:0/96'),
  // NAT64's well-known prefix: a NAT64 gateway connects to the IPv4 address
  ipaddr.parseCIDR('64:ff9b::/96'),
  // IPv4-compatible (deprecated): a host that still routes it (a sit tunnel) reaches the IPv4
  // address; :: and ::1 are in it too, and are judged as themselves (see embeddedIPv4)
  ipaddr.parseCIDR('::/96'),
]

/**
 * The IPv4 address an IPv6 address carries and reaches, for the forms that do
 * (IPV4_EMBEDDING); null for any other address. `::` and `::1` are the unspecified and
 * loopback addresses themselves, not IPv4 0.0.0.0 and 0.0.0.1.
 */
function embeddedIPv4(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | null {
  if (address.kind() !== 'ipv6') return null
  const v6 = address as ipaddr.IPv6
  const range = v6.range()
  if (range === 'unspecified' || range === 'loopback') return null
  if (!IPV4_EMBEDDING.some(([base, bits]) => v6.match(base as ipaddr.IPv6, bits))) return null
  const bytes = v6.toByteArray()
  return new ipaddr.IPv4(bytes.slice(12))
}

/** An allowed range written as IPv4-mapped IPv6 (`::ffff:10.0.0.0/104`), as the IPv4 range it maps. */
function asIPv4Range([range, bits]: Network): Network {
  if (range.kind() === 'ipv6' && (range as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
    return [(range as ipaddr.IPv6).toIPv4Address(), bits - 96]
  return [range, bits]
}

/** Whether `address`, or the IPv4 address it carries, is in the network. */
function inNetwork(address: ipaddr.IPv4 | ipaddr.IPv6, network: Network): boolean {
  const [base, bits] = asIPv4Range(network)
  const embedded = embeddedIPv4(address)
  return [address, ...(embedded ? [embedded] : [])].some(
    (candidate) => candidate.kind() === base.kind() && candidate.match(base, bits),
  )
}

/**
 * Why the service refuses to connect to `ip` (null: it may). Only ordinary public unicast
 * addresses pass: ipaddr.js names every special range (private, loopback, link-local, unique
 * local, CGNAT, multicast, broadcast, unspecified, reserved, documentation, 6to4 and Teredo
 * tunnels, …). An IPv6 address that carries an IPv4 one (IPv4-mapped `::ffff:10.0.0.1`,
 * IPv4-compatible `::10.0.0.1`, IPv4-translated, NAT64 `64:ff9b::10.0.0.1`) is judged as the
 * IPv4 address it reaches, so none of them is a way around the rules. The cloud metadata
 * address 169.254.169.254 is link-local. A network in `allow` passes whatever its range.
 */
export function addressRefusal(ip: string, allow: readonly Network[] = []): string | null {
  let address: ipaddr.IPv4 | ipaddr.IPv6
  try {
    address = ipaddr.parse(ip)
  } catch {
    return `not an IP address: ${ip}`
  }
  if (allow.some((network) => inNetwork(address, network))) return null
  const embedded = embeddedIPv4(address)
  const range = (embedded ?? address).range()
  if (range === 'unicast') return null
  return embedded
    ? `${ip} is a ${range} address (IPv4 ${embedded.toString()} written as IPv6)`
    : `${ip} is a ${range} address`
}

/** A refusal or failure of an outbound request: what the delivery log shows. */
export class OutboundError extends Error {
  override name = 'OutboundError'
  /** The receiver's HTTP status, when it answered (a 3xx, 4xx or 5xx). */
  readonly statusCode: number | undefined
  /** true: the address is refused (SSRF rules); retrying the same URL cannot help soon. */
  readonly refused: boolean
  constructor(
    message: string,
    { statusCode, refused = false }: { statusCode?: number; refused?: boolean } = {},
  ) {
    super(message)
    this.statusCode = statusCode
    this.refused = refused
  }
}

/** How a name is resolved: every address it has (tests may answer for a name themselves). */
export type Resolve = (hostname: string) => Promise<string[]>

const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)

export interface OutboundOptions {
  /** Networks a receiver may be in even though they are private (WEBHOOK_ALLOW_NETWORKS). */
  allowNetworks?: readonly Network[]
  /** The whole exchange's bound (default OUTBOUND_TIMEOUT_MS; tests shorten it). */
  timeoutMs?: number
  /** The most of an answer read (default OUTBOUND_MAX_RESPONSE_BYTES). */
  maxResponseBytes?: number
  /** Default: the system's resolver (getaddrinfo, as every other program on the host). */
  resolve?: Resolve
  /** Connections kept open per receiver (keep-alive), for bursts to one host. */
  connectionsPerOrigin?: number
}

export interface OutboundRequest {
  /** Default POST; PUT for APIs that take a message by PUT (Matrix). */
  method?: 'POST' | 'PUT'
  headers: Record<string, string>
  body: string | Buffer
}

export interface OutboundResponse {
  statusCode: number
  /** The start of the answer, at most maxResponseBytes. */
  body: Buffer
  durationMs: number
}

/** A guarded HTTP client: POSTs (or PUTs) to user-given URLs under the rules above. */
export class OutboundClient {
  /**
   * undici and the agent, made at the first request: undici's modules (and their memory)
   * load only in a service that calls out (docs/performance.md#cold-start-and-memory).
   */
  #client: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined
  readonly #connectionsPerOrigin: number
  readonly #allow: readonly Network[]
  readonly #timeoutMs: number
  readonly #maxBytes: number
  readonly #resolve: Resolve

  constructor(options: OutboundOptions = {}) {
    this.#allow = options.allowNetworks ?? []
    this.#timeoutMs = options.timeoutMs ?? OUTBOUND_TIMEOUT_MS
    this.#maxBytes = options.maxResponseBytes ?? OUTBOUND_MAX_RESPONSE_BYTES
    this.#resolve = options.resolve ?? systemResolve
    this.#connectionsPerOrigin = options.connectionsPerOrigin ?? 32
  }

  async #makeClient(): Promise<{ agent: Agent; request: typeof import('undici').request }> {
    const { Agent, buildConnector, request } = await import('undici')
    const direct = buildConnector({ timeout: this.#timeoutMs })
    const agent = new Agent({
      connections: this.#connectionsPerOrigin,
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      // note: the connection goes to the address checked here, never to a second lookup's;
      // the name stays the TLS server name (SNI, certificate check) and the Host header
      connect: (options, callback) => {
        this.checkedAddress(options.hostname).then(
          (address) => direct({ ...options, hostname: address }, callback),
          (err: Error) => callback(err, null),
        )
      },
    })
    return { agent, request }
  }

  /** The address to connect to for `hostname`: the first it resolves to, once all passed. */
  async checkedAddress(hostname: string): Promise<string> {
    const bare = hostname.replace(/^\[(.*)\]$/, '$1')
    const addresses = isIP(bare) !== 0 ? [bare] : await this.#resolve(bare)
    if (addresses.length === 0) throw new OutboundError(`${bare} resolves to no address`)
    // note: every address, not only the one connected to: a name that also points inside
    // is refused as a whole, whichever address a later lookup would favour
    for (const address of addresses) {
      const refusal = addressRefusal(address, this.#allow)
      if (refusal !== null)
        throw new OutboundError(
          bare === address ? `refused: ${refusal}` : `refused: ${bare} resolves to ${refusal}`,
          { refused: true },
        )
    }
    return addresses[0] as string
  }

  /**
   * Why the address rules refuse `url` now (the delivery log's words after `refused: `), or
   * null when a request would be tried: what a user is told when making or testing a channel.
   * A name that does not resolve now, or not within the timeout, is not refused here: every
   * send judges it again (DNS answers change).
   */
  async refusalOf(url: string): Promise<string | null> {
    const parsed = URL.parse(url)
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
      return 'only http and https URLs are called'
    let timer: NodeJS.Timeout | undefined
    const unresolved = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.#timeoutMs)
    })
    const judged = this.checkedAddress(parsed.hostname).then(
      () => null,
      (err: unknown) =>
        err instanceof OutboundError && err.refused ? err.message.replace(/^refused: /, '') : null,
    )
    try {
      return await Promise.race([judged, unresolved])
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * POSTs `body` to `url`; resolves with a 2xx answer, rejects with OutboundError otherwise
   * (a 3xx is a failure: redirects are not followed).
   */
  async post(
    url: string,
    { method = 'POST', headers, body }: OutboundRequest,
  ): Promise<OutboundResponse> {
    const parsed = URL.parse(url)
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
      throw new OutboundError('only http and https URLs are called', { refused: true })
    this.#client ??= this.#makeClient()
    const { agent, request } = await this.#client
    const started = performance.now()
    const signal = AbortSignal.timeout(this.#timeoutMs)
    try {
      const answer = await request(parsed, {
        method,
        headers,
        body,
        dispatcher: agent,
        signal,
      })
      const chunks: Buffer[] = []
      let read = 0
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        const room = this.#maxBytes - read
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk)
        read += Math.min(chunk.length, room)
        if (read >= this.#maxBytes) {
          // the rest is never read: the connection goes with it
          answer.body.destroy()
          break
        }
      }
      const durationMs = Math.round(performance.now() - started)
      const { statusCode } = answer
      if (statusCode < 200 || statusCode > 299)
        throw new OutboundError(
          statusCode < 400
            ? `HTTP ${statusCode} (redirects are not followed)`
            : `HTTP ${statusCode}`,
          { statusCode },
        )
      return { statusCode, body: Buffer.concat(chunks), durationMs }
    } catch (err) {
      if (err instanceof OutboundError) throw err
      if (signal.aborted) throw new OutboundError(`no answer within ${this.#timeoutMs} ms`)
      throw new OutboundError(describe(err))
    }
  }

  async close(): Promise<void> {
    if (this.#client) await (await this.#client).agent.close()
  }
}

/** A failure in a few words: the error's code and message, or its cause's (undici wraps them). */
function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: unknown }
  if (e.cause instanceof OutboundError) return e.cause.message
  const inner = (e.cause ?? undefined) as { code?: string; message?: string } | undefined
  const source = inner?.code ? inner : e
  const message = source.message ?? String(err)
  return source.code && !message.includes(source.code) ? `${source.code}: ${message}` : message
}
