import { Type } from 'typebox'
import type { FieldError } from '../../lib/errors.ts'
import { type OutboundClient, OutboundError, type OutboundRequest } from '../../lib/outbound.ts'
import { withPatternMessage } from '../../lib/schema.ts'
import { DeliveryError } from './channel-types.ts'
import { unreachableMessage } from './webhook-channel.ts'

// What the channel types for push and chat services (Gotify, Pushover, Telegram, Matrix,
// ntfy; docs/notifications.md#services) share: a server's base URL, a credential's shape,
// and one request through the guarded client (docs/notifications.md#outbound-safety).

/** The longest base URL a self-hosted server may have. */
const MAX_SERVER_URL_LENGTH = 2048

/** A self-hosted server's base URL in a config schema (`https://gotify.example.com`). */
export const ServerUrl = (description: string) =>
  withPatternMessage(
    Type.String({
      minLength: 1,
      maxLength: MAX_SERVER_URL_LENGTH,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
      description,
    }),
    'must be an http or https URL',
  )

/** A credential in a config schema: one line of printable ASCII, never shown again. */
export const Credential = (
  description: string,
  options: { pattern?: string; patternMessage?: string } = {},
) =>
  withPatternMessage(
    Type.String({
      minLength: 1,
      maxLength: 512,
      pattern: options.pattern ?? '^[\\x21-\\x7e]+$',
      description: `${description}. Stored, never shown in an answer`,
    }),
    options.patternMessage ?? 'must be printable characters without spaces',
  )

/**
 * Why `value` is not a usable server base URL (a field error for `field`), or null: an
 * absolute http(s) URL with a host, without user name, password, query or fragment (a path
 * is kept: a server behind a reverse proxy at `/gotify/`).
 */
export function serverUrlProblem(field: string, value: string): FieldError | null {
  const url = URL.parse(value)
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
    return { field, message: 'must be an absolute http or https URL' }
  if (url.username !== '' || url.password !== '')
    return { field, message: 'must not hold a user name or password' }
  if (url.search !== '' || url.hash !== '')
    return { field, message: "must be the server's address, without a query or fragment" }
  return null
}

/** `path` (already encoded) under a base URL, whatever its own path: `base/path`. */
export function endpointUrl(base: string, path: string): string {
  const url = new URL(base)
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
  return url.href
}

/** What a user is told when the guard refuses a server's address, or null. */
export async function serverReachProblem(
  outbound: OutboundClient,
  field: string,
  url: string,
): Promise<FieldError | null> {
  const refusal = await outbound.refusalOf(url)
  return refusal === null ? null : { field, message: unreachableMessage(refusal) }
}

/**
 * One request to a service through the guarded client: its HTTP status when it answered
 * 2xx; a DeliveryError otherwise (retried, unless the address is refused). The URL is never
 * in the error: a Telegram bot token is part of it.
 */
export async function sendToService(
  outbound: OutboundClient,
  url: string,
  request: OutboundRequest,
): Promise<{ statusCode: number }> {
  try {
    return { statusCode: (await outbound.post(url, request)).statusCode }
  } catch (err) {
    if (err instanceof OutboundError)
      throw new DeliveryError(err.message, !err.refused, err.statusCode)
    throw err
  }
}

/** JSON request headers every service channel sends. */
export const JSON_HEADERS = {
  'content-type': 'application/json',
  'user-agent': 'statusd-notifications',
} as const
