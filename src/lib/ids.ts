import { hash } from 'node:crypto'
import { customAlphabet, nanoid } from 'nanoid'

/** Random base62 text (A-Z a-z 0-9) of the given length, without modulo bias. */
const base62 = customAlphabet('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789')

/**
 * 21-character URL-safe id (A-Z a-z 0-9 - _, ≈126 bits), unique across the service.
 * note: the first character is a letter or digit, never '-': the admin CLI takes ids as
 * arguments (`key revoke <keyId>`, `--user <id>`), where a leading '-' reads as an option.
 */
export const newId = (): string => base62(1) + nanoid(20)

/** 8 lowercase base32 characters (40 bits): the public share id. */
export const newShareId: () => string = customAlphabet('abcdefghijklmnopqrstuvwxyz234567', 8)

export const API_KEY_PREFIX = 'sdk_'
/** Characters of a key kept in the clear so a user can tell their keys apart. */
const VISIBLE_KEY_CHARS = API_KEY_PREFIX.length + 8

/** A new API key: `sdk_` + 40 base62 characters (≈238 bits); the secret is shown once. */
export function newApiKey(): { secret: string; prefix: string; hash: string } {
  const secret = API_KEY_PREFIX + base62(40)
  return { secret, prefix: secret.slice(0, VISIBLE_KEY_CHARS), hash: hashApiKey(secret) }
}

/**
 * SHA-256 of a key. Keys carry ≥160 random bits, so a fast hash is enough (no stretching);
 * looking keys up by hash also means no secret is ever compared byte by byte.
 */
export const hashApiKey = (secret: string): string => hash('sha256', secret, 'hex')

/**
 * A bearer token handed to a person (session cookie, sign-in link, invitation link, share
 * link): a recognisable prefix (`sds_`, `sdl_`, `sdi_`, `sdp_`, …, so logs can redact it,
 * lib/redact.ts) + 43 base62 characters (≈256 bits). Stored only as its hash (hashApiKey).
 */
export function newToken(prefix: `sd${string}_`): { token: string; hash: string } {
  const token = prefix + base62(43)
  return { token, hash: hashApiKey(token) }
}
