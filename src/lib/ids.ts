import { hash, randomBytes, randomFillSync } from 'node:crypto'

const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** Random string over an alphabet, without modulo bias (rejection sampling). */
function randomString(alphabet: string, length: number): string {
  // note: masks to the next power of two and rejects bytes past the alphabet's end
  const mask = (1 << Math.ceil(Math.log2(alphabet.length))) - 1
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      const index = byte & mask
      if (index < alphabet.length) out += alphabet[index]
      if (out.length === length) break
    }
  }
  return out
}

// Random bytes for newId, drawn from the system's generator 4 kB at a time (128 ids) and each
// used once, as crypto.randomUUID buffers its own: a randomBytes call per id (every value
// write makes one, for its outbox row) showed in a PATCH's CPU profile, most of it in the
// call into OpenSSL and the buffer it allocates.
const POOL = Buffer.alloc(4096)
let poolUsed = POOL.length

/** 32 random bytes never handed out before: a view into the pool, valid until the next call. */
function random32(): Buffer {
  if (poolUsed + 32 > POOL.length) {
    randomFillSync(POOL)
    poolUsed = 0
  }
  const bytes = POOL.subarray(poolUsed, poolUsed + 32)
  poolUsed += 32
  return bytes
}

/**
 * 21-character URL-safe id (≈126 bits), unique across the service.
 * note: the first character is a letter or digit, never '-': the admin CLI takes ids as
 * arguments (`key revoke <keyId>`, `--user <id>`), where a leading '-' reads as an option.
 */
export function newId(): string {
  // note: 32 random bytes per id. URL_SAFE has 64 characters, so 6 bits pick one without
  // bias; the first character is drawn from BASE62 by rejecting 62 and 63 (1 byte in 32), so
  // 32 bytes nearly always suffice; the loop covers the rest.
  for (;;) {
    const bytes = random32()
    let first = 0
    while (first < bytes.length - 20 && ((bytes[first] as number) & 63) >= BASE62.length) first++
    if (first === bytes.length - 20) continue
    let out = BASE62[(bytes[first] as number) & 63] as string
    for (let i = first + 1; i <= first + 20; i++) out += URL_SAFE[(bytes[i] as number) & 63]
    return out
  }
}

/** 8 lowercase base32 characters (40 bits): the public share id. */
export const newShareId = (): string => randomString(BASE32, 8)

export const API_KEY_PREFIX = 'sdk_'
/** Characters of a key kept in the clear so a user can tell their keys apart. */
const VISIBLE_KEY_CHARS = API_KEY_PREFIX.length + 8

/** A new API key: `sdk_` + 40 base62 characters (≈238 bits); the secret is shown once. */
export function newApiKey(): { secret: string; prefix: string; hash: string } {
  const secret = API_KEY_PREFIX + randomString(BASE62, 40)
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
  const token = prefix + randomString(BASE62, 43)
  return { token, hash: hashApiKey(token) }
}
