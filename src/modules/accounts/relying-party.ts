import { isIP } from 'node:net'
import type { FastifyRequest } from 'fastify'
import { ApiError } from '../../lib/errors.ts'
import type { RelyingParty } from '../users/passkeys.service.ts'

// Who passkeys belong to (docs/accounts.md#passkeys). A browser binds every passkey to a
// relying party ID, a domain name, and signs the origin it was used on; both must be stable,
// or the passkeys made today stop working tomorrow. So they come from PUBLIC_URL. Without it
// the request's Host is trusted only when it is `localhost` (or a name under it): a browser
// treats that as a secure context and a valid RP ID, which is what trying statusd out on one
// machine needs; anywhere else a passkey route answers 409 naming PUBLIC_URL.

const RP_NAME = 'statusd'

const needsPublicUrl = (why: string) =>
  new ApiError(
    409,
    'conflict',
    `Passkeys need PUBLIC_URL set to the address people open statusd at, with a domain name (https://status.example.com): ${why}`,
  )

const isLocalhost = (hostname: string) =>
  hostname === 'localhost' || hostname.endsWith('.localhost')

/** The host name of a URL's host, without the brackets of an IPv6 address. */
const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1')

/**
 * The relying party for this service: from PUBLIC_URL, or for a request to `localhost` when
 * PUBLIC_URL is not set. Throws 409 `conflict` when there is none (an IP address is never an
 * RP ID).
 */
export function relyingPartyResolver(
  publicUrl: string | null,
): (request: FastifyRequest) => RelyingParty {
  if (publicUrl !== null) {
    const url = new URL(publicUrl)
    if (isIP(bare(url.hostname)) !== 0) {
      const refused = `PUBLIC_URL names an IP address (${url.hostname}), which cannot hold passkeys`
      return () => {
        throw needsPublicUrl(refused)
      }
    }
    const rp: RelyingParty = { id: url.hostname, origin: url.origin, name: RP_NAME }
    return () => rp
  }
  return (request) => {
    const host = request.headers.host ?? ''
    let url: URL | undefined
    try {
      url = new URL(`${request.protocol}://${host}`)
    } catch {
      url = undefined
    }
    if (url === undefined || !isLocalhost(url.hostname) || url.username || url.password)
      throw needsPublicUrl('it is not set, and this request is not to localhost')
    return { id: url.hostname, origin: url.origin, name: RP_NAME }
  }
}
