import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server'
import type { Kysely, Transaction } from 'kysely'
import type { DB, Db } from '../../db/database.ts'
import { lockForTransaction } from '../../db/locks.ts'
import type { Clock } from '../../lib/clock.ts'
import { ApiError, notFound, validationError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { creationIso } from '../../lib/time.ts'
import { recordFailedSignIn } from '../audit/audit.service.ts'
import { type Requester, recordBy } from '../audit/security-events.ts'
import {
  type AuthTokenPurpose,
  consumeAuthToken,
  inspectAuthToken,
  issueAuthToken,
} from './auth-tokens.service.ts'
import {
  deletePasskeyOfUser,
  deletePasskeysOfUser,
  findPasskeyByCredentialId,
  findPasskeysOfUser,
  insertPasskey,
  markPasskeyUsed,
  type PasskeyRow,
  renamePasskeyOfUser,
} from './passkeys.repository.ts'
import { assertEnabled, userById } from './users.service.ts'

// Passkeys (docs/accounts.md#passkeys): WebAuthn credentials a signed-in user registers, and
// then signs in with, without a password or even an e-mail address. @simplewebauthn/server
// does the WebAuthn work (CBOR, COSE keys, signatures, origin and RP ID checks); this module
// keeps the credentials and the one-time challenges, and holds the rules.

/** Who the passkeys belong to, as the browser sees it: RP ID (a domain) and origin. */
export interface RelyingParty {
  /** The RP ID: a registrable domain, no scheme or port (`status.example.com`, `localhost`). */
  id: string
  /** The exact origin pages are served from (`https://status.example.com`). */
  origin: string
  /** Shown by the browser and authenticator when a passkey is made. */
  name: string
}

/** How long a challenge may be answered: the browser's prompt is given as long. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000

/**
 * The signature algorithms offered and accepted: EdDSA, ES256, RS256 (COSE ids), what
 * authenticators make. note: named, since the library's default adds ML-DSA-44 where Node
 * has it, an experimental Web Crypto algorithm that warns on every registration.
 */
const ALGORITHMS = [-8, -7, -257]

/** Passkeys one user may hold (OWASP API4: nothing a caller can grow without bound). */
export const MAX_PASSKEYS = 50

/** The length rules of a passkey's name: those of an API key's label. */
export const PASSKEY_NAME_LENGTHS = { minLength: 1, maxLength: 100 } as const

/** A passkey as its owner sees it: never the public key or the credential id. */
export interface PasskeyView {
  id: string
  name: string
  /** How the authenticator said it can be reached (`internal`, `usb`, `hybrid`, …). */
  transports: string[]
  createdAt: string
  lastUsedAt: string | null
}

const transportsOf = (row: PasskeyRow): string[] => {
  if (row.transports === null) return []
  const parsed: unknown = JSON.parse(row.transports)
  return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string') : []
}

const toPasskeyView = (row: PasskeyRow): PasskeyView => ({
  id: row.id,
  name: row.name,
  transports: transportsOf(row),
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
})

const passkeyNotFound = () => notFound('Passkey not found')

/** Any sign-in with a passkey that fails: one answer, whatever was wrong. */
const passkeyRefused = () =>
  new ApiError(401, 'invalidCredentials', 'The passkey could not sign you in')

/**
 * The user handle every passkey of a user carries: their id. One handle per user, so an
 * authenticator that already holds a passkey of theirs for this service replaces it rather
 * than keeping two; it is random, so it tells an authenticator nothing about the person.
 */
const userHandleOf = (userId: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(userId)

/** A registration or sign-in answer that is not one: 400, naming the field. */
const badResponse = (message: string) => validationError([{ field: 'response', message }])

// Challenges are one-time tokens (auth-tokens.service.ts): the token itself is the challenge
// the authenticator signs (as its UTF-8 bytes), so an answer names the token it answers, and
// only the token's hash is stored. A challenge is used up in the transaction that stores the
// passkey or records the sign-in: a failed attempt leaves it open.
const REGISTRATION: AuthTokenPurpose = 'passkey-registration'
const AUTHENTICATION: AuthTokenPurpose = 'passkey-authentication'

type WebAuthn = typeof import('@simplewebauthn/server') &
  typeof import('@simplewebauthn/server/helpers')
let webAuthnLibrary: Promise<WebAuthn> | undefined
/**
 * @simplewebauthn/server and its helpers, loaded at the first passkey request rather than at
 * start: with the certificate and ASN.1 parsers under them they are memory that a server
 * whose people never use a passkey never needs
 * (docs/performance.md#cold-start-and-memory).
 */
const webAuthn = (): Promise<WebAuthn> =>
  (webAuthnLibrary ??= Promise.all([
    import('@simplewebauthn/server'),
    import('@simplewebauthn/server/helpers'),
  ]).then(([server, helpers]) => ({ ...server, ...helpers })))

/** The challenge a token is, as options carry it and clientDataJSON echoes it (base64url). */
const challengeOf = ({ isoBase64URL, isoUint8Array }: WebAuthn, token: string): string =>
  isoBase64URL.fromBuffer(isoUint8Array.fromUTF8String(token))

/** The token a response's clientDataJSON answers, or undefined when it cannot be read. */
function tokenAnswered(
  { decodeClientDataJSON, isoBase64URL, isoUint8Array }: WebAuthn,
  clientDataJSON: string,
): string | undefined {
  try {
    const { challenge } = decodeClientDataJSON(clientDataJSON)
    if (typeof challenge !== 'string' || !isoBase64URL.isBase64URL(challenge)) return undefined
    return isoUint8Array.toUTF8String(isoBase64URL.toBuffer(challenge))
  } catch {
    return undefined
  }
}

/** Uses a challenge up, in the caller's transaction; false when it is not open any more. */
async function useChallenge(
  db: Db,
  clock: Clock,
  token: string,
  purpose: AuthTokenPurpose,
): Promise<{ userId: string | null } | null> {
  try {
    return await consumeAuthToken(db, clock, token, purpose)
  } catch (err) {
    // 404 (never issued) or 410 (used or expired): to the caller, the same closed door
    if (err instanceof ApiError) return null
    throw err
  }
}

/** The caller's passkeys, oldest first. */
export async function passkeysOf(db: Kysely<DB>, userId: string): Promise<PasskeyView[]> {
  return (await findPasskeysOfUser(db, userId)).map(toPasskeyView)
}

/**
 * Options for `navigator.credentials.create()`: a new one-time challenge bound to the user,
 * the user's existing passkeys excluded (an authenticator holding one refuses to make a
 * second), user verification and a discoverable credential required.
 */
export async function passkeyRegistrationOptions(
  db: Kysely<DB>,
  rp: RelyingParty,
  clock: Clock,
  userId: string,
  /** What the authenticator shows instead of the stored name and address (first-run setup). */
  shownAs?: { name: string; email: string },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const found = await userById(db, userId)
  if (!found) throw passkeyNotFound()
  const user = shownAs ? { ...found, ...shownAs } : found
  const existing = await findPasskeysOfUser(db, userId)
  const { token } = await issueAuthToken(db, clock, {
    purpose: REGISTRATION,
    userId: user.id,
    lifetimeMs: CHALLENGE_TTL_MS,
  })
  const { generateRegistrationOptions } = await webAuthn()
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: userHandleOf(user.id),
    // what the authenticator shows to tell the person's passkeys apart
    userName: user.email ?? user.name,
    userDisplayName: user.name,
    timeout: CHALLENGE_TTL_MS,
    attestationType: 'none',
    supportedAlgorithmIDs: ALGORITHMS,
    excludeCredentials: existing.map((row) => ({
      id: row.credential_id,
      transports: transportsOf(row),
    })),
    // note: sign-in names no account (no e-mail, no allowCredentials), so only a
    // discoverable credential can ever be used; requiring one makes an authenticator that
    // cannot keep one fail now, not at the first sign-in
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    challenge: token,
  })
}

/**
 * Verifies a registration (`navigator.credentials.create()`'s answer) against a challenge
 * issued to this user, and stores the passkey. The challenge is used up only when the
 * passkey is stored: a failed attempt changes nothing.
 */
export async function registerPasskey(
  db: Kysely<DB>,
  rp: RelyingParty,
  clock: Clock,
  userId: string,
  input: { name?: string; response: RegistrationResponseJSON },
  /**
   * `alongside` runs in the transaction that stores the passkey (if it throws, nothing is
   * stored); `by` is who asked, for the security log.
   */
  extra: { alongside?: (tx: Transaction<DB>) => Promise<void>; by?: Requester } = {},
): Promise<PasskeyView> {
  const lib = await webAuthn()
  const token = tokenAnswered(lib, input.response.response.clientDataJSON)
  if (token === undefined || (await inspectAuthToken(db, clock, token, REGISTRATION)) !== 'valid')
    throw badResponse('answers no registration challenge that is still open: ask for new options')
  let verification: Awaited<ReturnType<WebAuthn['verifyRegistrationResponse']>>
  try {
    verification = await lib.verifyRegistrationResponse({
      response: input.response,
      expectedChallenge: challengeOf(lib, token),
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    })
  } catch (err) {
    throw badResponse(`is not a valid registration: ${(err as Error).message}`)
  }
  if (!verification.verified) throw badResponse('is not a valid registration')
  const { credential } = verification.registrationInfo
  return db.transaction().execute(async (tx) => {
    // the count and the insert in one turn per user, on every instance (PostgreSQL)
    await lockForTransaction(tx, `statusd:passkeys:${userId}`)
    // note: the challenge must be this user's: an answer to another's registers nothing (and
    // the rollback leaves their challenge open)
    const used = await useChallenge(tx, clock, token, REGISTRATION)
    if (used?.userId !== userId)
      throw badResponse('answers no registration challenge of yours that is still open')
    if (await findPasskeyByCredentialId(tx, credential.id))
      throw new ApiError(409, 'conflict', 'This passkey is registered already')
    const existing = await findPasskeysOfUser(tx, userId)
    if (existing.length >= MAX_PASSKEYS)
      throw new ApiError(
        409,
        'conflict',
        `You have ${MAX_PASSKEYS} passkeys, the most allowed; delete one first`,
      )
    const row = await insertPasskey(tx, {
      id: newId(),
      user_id: userId,
      credential_id: credential.id,
      public_key: lib.isoBase64URL.fromBuffer(credential.publicKey),
      counter: credential.counter,
      transports:
        credential.transports === undefined ? null : JSON.stringify(credential.transports),
      name: input.name ?? `Passkey ${existing.length + 1}`,
      created_at: creationIso(),
      last_used_at: null,
    })
    await extra.alongside?.(tx)
    await recordBy(tx, extra.by, 'passkeyAdded', userId, { passkeyId: row.id, name: row.name })
    return toPasskeyView(row)
  })
}

/** Renames one of the caller's passkeys; someone else's is 404, as an unknown one. */
export async function renamePasskey(
  db: Kysely<DB>,
  userId: string,
  id: string,
  name: string,
): Promise<PasskeyView> {
  const row = await renamePasskeyOfUser(db, userId, id, name)
  if (!row) throw passkeyNotFound()
  return toPasskeyView(row)
}

/**
 * Removes every passkey of the user (an address proven by a mailed link,
 * docs/accounts.md#e-mail: no one who held the account before keeps a way in); how many went.
 */
export const deleteAllPasskeys = (db: Db, userId: string): Promise<number> =>
  deletePasskeysOfUser(db, userId)

/** Deletes one of the caller's passkeys: it signs no one in any more. Someone else's is 404. */
export async function deletePasskey(
  db: Kysely<DB>,
  userId: string,
  id: string,
  by?: Requester,
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    if (!(await deletePasskeyOfUser(tx, userId, id))) throw passkeyNotFound()
    await recordBy(tx, by, 'passkeyRemoved', userId, { passkeyId: id })
  })
}

/**
 * Options for `navigator.credentials.get()`, for anyone: a one-time challenge and its id.
 * No credentials are listed (the authenticator offers its discoverable ones), so the
 * answer says nothing about who has a passkey here.
 */
export async function passkeyAuthenticationOptions(
  db: Kysely<DB>,
  rp: RelyingParty,
  clock: Clock,
): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const { token } = await issueAuthToken(db, clock, {
    purpose: AUTHENTICATION,
    userId: null,
    lifetimeMs: CHALLENGE_TTL_MS,
  })
  const { generateAuthenticationOptions } = await webAuthn()
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: 'required',
    timeout: CHALLENGE_TTL_MS,
    challenge: token,
  })
  // the challenge id is the token itself: the sign-in names it, and the signature must be over it
  return { challengeId: token, options }
}

/**
 * Checks a sign-in (`navigator.credentials.get()`'s answer) against the challenge it names
 * and the passkey it was made with; returns the passkey's user. Whatever fails (an unknown,
 * used or expired challenge, an unknown or deleted passkey, a signature over another
 * challenge, a counter gone backwards) is the same 401 `invalidCredentials`, and changes
 * nothing. On success the challenge is used up, and the passkey's counter and last use
 * recorded, in one transaction.
 */
export async function signInWithPasskey(
  db: Kysely<DB>,
  rp: RelyingParty,
  clock: Clock,
  input: { challengeId: string; response: AuthenticationResponseJSON },
  client: { ip: string | null; userAgent: string | null } = { ip: null, userAgent: null },
): Promise<{ userId: string; passkeyId: string }> {
  if ((await inspectAuthToken(db, clock, input.challengeId, AUTHENTICATION)) !== 'valid')
    throw passkeyRefused()
  const passkey = await findPasskeyByCredentialId(db, input.response.id)
  if (!passkey) throw passkeyRefused()
  // the user handle, when the authenticator gives one, must be the passkey's own user's
  const lib = await webAuthn()
  const handle = input.response.response.userHandle
  if (handle !== undefined && handle !== lib.isoBase64URL.fromBuffer(userHandleOf(passkey.user_id)))
    throw passkeyRefused()
  let newCounter: number
  try {
    const verification = await lib.verifyAuthenticationResponse({
      response: input.response,
      expectedChallenge: challengeOf(lib, input.challengeId),
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: passkey.credential_id,
        publicKey: lib.isoBase64URL.toBuffer(passkey.public_key),
        counter: Number(passkey.counter),
        transports: transportsOf(passkey),
      },
      requireUserVerification: true,
    })
    if (!verification.verified) throw passkeyRefused()
    newCounter = verification.authenticationInfo.newCounter
  } catch {
    // a known passkey whose answer does not verify: a failed sign-in of its account
    // (docs/security.md#security-log)
    await recordFailedSignIn(db, {
      userId: passkey.user_id,
      ...client,
      detail: { method: 'passkey', reason: 'notVerified', passkeyId: passkey.id },
    })
    throw passkeyRefused()
  }
  // a disabled account signs in by no method (docs/operations.md#operators); the challenge stays
  assertEnabled(await userById(db, passkey.user_id))
  await db.transaction().execute(async (tx) => {
    // note: both or neither: a challenge answered twice at once signs in once; a passkey
    // deleted meanwhile signs no one in, and leaves the challenge unused
    if (!(await useChallenge(tx, clock, input.challengeId, AUTHENTICATION))) throw passkeyRefused()
    if (!(await markPasskeyUsed(tx, passkey.id, newCounter, new Date(clock.now()).toISOString())))
      throw passkeyRefused()
  })
  return { userId: passkey.user_id, passkeyId: passkey.id }
}
