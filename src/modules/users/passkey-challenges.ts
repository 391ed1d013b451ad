import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { hashApiKey, newId } from '../../lib/ids.ts'

// The one-time WebAuthn challenges of passkeys (docs/accounts.md#passkeys), kept in
// `auth_tokens` beside the other one-time tokens: found by id (sign-in names it) or by the
// challenge's hash (a registration's answer carries the challenge), for one purpose, unused
// and unexpired; used up once, by a conditional update, so two answers to one challenge
// cannot both succeed.

export type ChallengePurpose = 'passkey-registration' | 'passkey-authentication'

export interface OpenChallenge {
  id: string
  /** The challenge as the options gave it (base64url). */
  challenge: string
}

const iso = (ms: number) => new Date(ms).toISOString()

/** Stores a new challenge; returns its id. Expired challenges of either purpose go first. */
export async function issueChallenge(
  db: Db,
  clock: Clock,
  input: { purpose: ChallengePurpose; challenge: string; userId: string | null; ttlMs: number },
): Promise<string> {
  const now = clock.now()
  // note: anyone may ask for sign-in options, so the table must not keep what expired
  await db
    .deleteFrom('auth_tokens')
    .where('purpose', 'in', ['passkey-registration', 'passkey-authentication'])
    .where('expires_at', '<=', iso(now))
    .execute()
  const id = newId()
  await db
    .insertInto('auth_tokens')
    .values({
      id,
      token_hash: hashApiKey(input.challenge),
      purpose: input.purpose,
      user_id: input.userId,
      data: JSON.stringify({ challenge: input.challenge }),
      created_at: iso(now),
      expires_at: iso(now + input.ttlMs),
      used_at: null,
    })
    .execute()
  return id
}

/**
 * The open (unused, unexpired) challenge of this purpose with this id, or this challenge
 * text; with `userId`, only one issued to that user.
 */
export async function readChallenge(
  db: Db,
  clock: Clock,
  find: { purpose: ChallengePurpose; userId?: string } & (
    | { id: string; challenge?: never }
    | { challenge: string; id?: never }
  ),
): Promise<OpenChallenge | undefined> {
  let query = db
    .selectFrom('auth_tokens')
    .select(['id', 'data'])
    .where('purpose', '=', find.purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', iso(clock.now()))
  query =
    find.id !== undefined
      ? query.where('id', '=', find.id)
      : query.where('token_hash', '=', hashApiKey(find.challenge))
  if (find.userId !== undefined) query = query.where('user_id', '=', find.userId)
  const row = await query.executeTakeFirst()
  if (!row || row.data === null) return undefined
  const { challenge } = JSON.parse(row.data) as { challenge: string }
  return { id: row.id, challenge }
}

/** Uses a challenge up; false when it was used already (another answer won). */
export async function consumeChallenge(db: Db, clock: Clock, id: string): Promise<boolean> {
  const result = await db
    .updateTable('auth_tokens')
    .set({ used_at: iso(clock.now()) })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}
