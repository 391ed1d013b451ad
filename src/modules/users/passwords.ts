import { randomBytes, timingSafeEqual } from 'node:crypto'
import { availableParallelism } from 'node:os'
import type { Piscina } from 'piscina'
import { tooManyRequests } from '../../lib/errors.ts'

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

/** One scrypt hash as a thread of the pool computes it (scrypt-worker.cjs). */
export interface ScryptJob {
  password: string
  salt: Uint8Array
  length: number
  N: number
  r: number
  p: number
  maxmem: number
}

/** Seconds a caller refused by a full pool is told to wait (Retry-After). */
export const HASH_POOL_RETRY_AFTER_S = 1

/**
 * Where password hashes are computed (docs/accounts.md#password-hashing): threads of their
 * own, at most one hash per core at a time, and a short queue; a hash asked for beyond that is
 * refused at once with 429 `tooManyRequests`. Not libuv's thread pool (where `crypto.scrypt`
 * runs): file writes, fsyncs and DNS wait in that one, so sign-ins that filled it held up
 * every write. The threads start with the first hash, run at a lower priority than the
 * server's other threads, and end when idle, so a server nobody signs in to holds none.
 */
export class HashPool {
  /** Hashes computed at once. */
  readonly threads: number
  /** Hashes waiting beyond those, before one more is refused. */
  readonly queue: number
  readonly #run: ((job: ScryptJob) => Promise<Uint8Array>) | undefined
  #piscina: Promise<Piscina> | undefined
  #admitted = 0

  constructor({
    threads = availableParallelism(),
    queue = 4 * threads,
    run,
  }: {
    threads?: number
    queue?: number
    /** Computes a job instead of the threads (a test holds it, to fill the pool at will). */
    run?: (job: ScryptJob) => Promise<Uint8Array>
  } = {}) {
    this.threads = threads
    this.queue = queue
    this.#run = run
  }

  /** Hashes now computed or waiting. */
  get pending(): number {
    return this.#admitted
  }

  /** Computes a hash, or refuses at once (429 `tooManyRequests`) when the pool is full. */
  async derive(job: ScryptJob): Promise<Buffer> {
    if (this.#admitted >= this.threads + this.queue)
      throw tooManyRequests(
        'Too many passwords are being checked right now; try again shortly',
        HASH_POOL_RETRY_AFTER_S,
      )
    this.#admitted += 1
    try {
      const bytes: Uint8Array = this.#run
        ? await this.#run(job)
        : await (await this.#threads()).run(job)
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    } finally {
      this.#admitted -= 1
    }
  }

  // note: piscina and its threads load with the first hash (a server nobody signs in to pays
  // nothing for them)
  #threads(): Promise<Piscina> {
    this.#piscina ??= import('piscina').then(
      ({ Piscina }) =>
        new Piscina({
          filename: new URL('./scrypt-worker.cjs', import.meta.url).href,
          minThreads: 0,
          maxThreads: this.threads,
          idleTimeout: 30_000,
          // the server's own threads (the event loop, libuv's pool) come first on a busy host
          niceIncrement: 10,
        }),
    )
    return this.#piscina
  }

  /** Ends the threads (they end alone when idle; a test that made a pool calls this). */
  async close(): Promise<void> {
    const piscina = this.#piscina
    this.#piscina = undefined
    if (piscina) await (await piscina).destroy()
  }
}

/** The pool of the service's hashes. */
export const hashPool = new HashPool()

// note: Node's default maxmem (32 MiB) refuses N=2^15, r=8 and up; the need is 128·N·r bytes
const derive = (
  pool: HashPool,
  password: string,
  salt: Buffer,
  { ln, r, p }: ScryptParams,
  length: number,
) =>
  pool.derive({
    password: password.normalize('NFKC'),
    salt,
    length,
    N: 2 ** ln,
    r,
    p,
    maxmem: 128 * 2 ** ln * r + 1024 * 1024,
  })

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '')

/**
 * Hashes a password with scrypt (node:crypto, on the hash pool's threads: the event loop and
 * libuv's pool stay free). The result describes itself, in the PHC string format:
 * `$scrypt$ln=14,r=8,p=5$<salt>$<hash>` (base64 without padding). The password is NFKC
 * normalised first, so the same password typed on another keyboard matches.
 */
export async function hashPassword(
  password: string,
  params: ScryptParams = SCRYPT_PARAMS,
  pool: HashPool = hashPool,
): Promise<string> {
  const salt = randomBytes(SALT_LENGTH)
  const hash = await derive(pool, password, salt, params, KEY_LENGTH)
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${b64(salt)}$${b64(hash)}`
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/

/**
 * Whether `password` matches a stored hash (compared in constant time). A stored value that
 * is not a hash this code knows matches nothing.
 */
export async function verifyPassword(
  stored: string,
  password: string,
  pool: HashPool = hashPool,
): Promise<boolean> {
  const parts = PHC.exec(stored)
  if (!parts) return false
  const params = { ln: Number(parts[1]), r: Number(parts[2]), p: Number(parts[3]) }
  const salt = Buffer.from(parts[4] as string, 'base64')
  const expected = Buffer.from(parts[5] as string, 'base64')
  if (params.ln < 1 || params.ln > 22 || params.r < 1 || params.p < 1 || expected.length < 16)
    return false
  const actual = await derive(pool, password, salt, params, expected.length)
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

/**
 * A scrypt hasher with these parameters (tests of other rules take cheaper ones), on this
 * pool (a test of the pool's limits takes a small one).
 */
export function scryptHasherWith(params: ScryptParams, pool: HashPool = hashPool): PasswordHasher {
  let dummy: Promise<string> | undefined
  return {
    hash: (password) => hashPassword(password, params, pool),
    verify: (stored, password) => verifyPassword(stored, password, pool),
    dummyHash: () => {
      // note: a refusal (pool full) is not kept: the next sign-in makes the dummy again
      dummy ??= hashPassword(randomBytes(16).toString('hex'), params, pool).catch((error) => {
        dummy = undefined
        throw error
      })
      return dummy
    },
  }
}

/** The hasher of the service: scrypt with SCRYPT_PARAMS. */
export const scryptHasher: PasswordHasher = scryptHasherWith(SCRYPT_PARAMS)
