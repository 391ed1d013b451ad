import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'

// Passwords (docs/accounts.md#users; the choice of hash: docs/decisions/0010-password-hashing.md).

/** A password's lengths, in code points (an emoji counts one). */
export const PASSWORD_LENGTHS = { minLength: 12, maxLength: 256 } as const

/** How many of the most common passwords are refused. */
export const COMMON_PASSWORDS_REFUSED = 10_000

let common: Set<string> | undefined

/**
 * The 10 000 most common passwords, lower-cased: loaded once, on the first password judged
 * (the list is ~50 000 entries of JSON; a server that never sees a password never loads it).
 */
async function commonPasswords(): Promise<Set<string>> {
  if (common) return common
  const { dictionary } = await import('@zxcvbn-ts/language-common')
  const ranked = dictionary['passwords-common'] as string[]
  common = new Set(ranked.slice(0, COMMON_PASSWORDS_REFUSED).map((p) => p.toLowerCase()))
  return common
}

/**
 * What is wrong with a new password, in the words of a validation error, or undefined when
 * it is fine: 12 to 256 code points, well-formed Unicode, not one of the 10 000 most common
 * passwords (compared case-insensitively: `Password1234` is `password1234`).
 */
export async function passwordProblem(password: string): Promise<string | undefined> {
  // note: a lone surrogate would be hashed as U+FFFD, so two different passwords would match
  if (!password.isWellFormed()) return 'must be well-formed Unicode text'
  const length = [...password].length
  if (length < PASSWORD_LENGTHS.minLength)
    return `must be at least ${PASSWORD_LENGTHS.minLength} characters`
  if (length > PASSWORD_LENGTHS.maxLength)
    return `must be at most ${PASSWORD_LENGTHS.maxLength} characters`
  if ((await commonPasswords()).has(password.toLowerCase()))
    return 'is one of the most common passwords; choose another'
  return undefined
}

/** scrypt's cost: N = 2^ln, block size r, parallelism p. */
export interface ScryptParams {
  ln: number
  r: number
  p: number
}

/**
 * The parameters new hashes are made with: OWASP's N=2^14, r=8, p=5 (16 MiB a hash). Measured
 * against OWASP's other sets in docs/decisions/0010-password-hashing.md. Stored hashes name
 * their own parameters, so these can change and old hashes still verify.
 */
export const SCRYPT_PARAMS: ScryptParams = { ln: 14, r: 8, p: 5 }

const KEY_LENGTH = 32
const SALT_LENGTH = 16

const scryptAsync = promisify(scrypt) as (
  password: string | Buffer,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>

// note: Node's default maxmem (32 MiB) refuses N=2^15, r=8 and up; the need is 128·N·r bytes
const derive = (password: string, salt: Buffer, { ln, r, p }: ScryptParams, length: number) =>
  scryptAsync(password.normalize('NFKC'), salt, length, {
    N: 2 ** ln,
    r,
    p,
    maxmem: 128 * 2 ** ln * r + 1024 * 1024,
  })

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '')

/**
 * Hashes a password with scrypt (node:crypto, on libuv's thread pool: the event loop stays
 * free). The result describes itself, in the PHC string format:
 * `$scrypt$ln=14,r=8,p=5$<salt>$<hash>` (base64 without padding). The password is NFKC
 * normalised first, so the same password typed on another keyboard matches.
 */
export async function hashPassword(
  password: string,
  params: ScryptParams = SCRYPT_PARAMS,
): Promise<string> {
  const salt = randomBytes(SALT_LENGTH)
  const hash = await derive(password, salt, params, KEY_LENGTH)
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${b64(salt)}$${b64(hash)}`
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/

/**
 * Whether `password` matches a stored hash (compared in constant time). A stored value that
 * is not a hash this code knows matches nothing.
 */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  const parts = PHC.exec(stored)
  if (!parts) return false
  const params = { ln: Number(parts[1]), r: Number(parts[2]), p: Number(parts[3]) }
  const salt = Buffer.from(parts[4] as string, 'base64')
  const expected = Buffer.from(parts[5] as string, 'base64')
  if (params.ln < 1 || params.ln > 22 || params.r < 1 || params.p < 1 || expected.length < 16)
    return false
  const actual = await derive(password, salt, params, expected.length)
  return timingSafeEqual(actual, expected)
}

/** Hashing and checking passwords; the app takes another in tests, to count verifications. */
export interface PasswordHasher {
  hash(password: string): Promise<string>
  verify(stored: string, password: string): Promise<boolean>
  /**
   * A hash of no one's password, made as `hash` makes them: signing in with an unknown e-mail
   * verifies against it, so that it costs what a wrong password costs (no account
   * enumeration by timing).
   */
  dummyHash(): Promise<string>
}

/** A scrypt hasher with these parameters (tests of other rules take cheaper ones). */
export function scryptHasherWith(params: ScryptParams): PasswordHasher {
  let dummy: Promise<string> | undefined
  return {
    hash: (password) => hashPassword(password, params),
    verify: verifyPassword,
    dummyHash: () => {
      dummy ??= hashPassword(randomBytes(16).toString('hex'), params)
      return dummy
    },
  }
}

/** The hasher of the service: scrypt with SCRYPT_PARAMS. */
export const scryptHasher: PasswordHasher = scryptHasherWith(SCRYPT_PARAMS)
