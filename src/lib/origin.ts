import type { AddressInfo } from 'node:net'

/**
 * The origin of the address a server listens on (`http://127.0.0.1:8080`), for links it hands
 * out when PUBLIC_URL is not set; `http://localhost` before it listens. Never the request's
 * `Host` or `X-Forwarded-*`, which a client chooses (docs/security.md).
 */
export function listeningOrigin(address: AddressInfo | string | null): string {
  if (address === null || typeof address === 'string') return 'http://localhost'
  const host =
    address.address === '0.0.0.0' || address.address === '::'
      ? 'localhost'
      : address.family === 'IPv6'
        ? `[${address.address}]`
        : address.address
  return `http://${host}:${address.port}`
}
