import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { DB, Db, IdempotencyRecord } from '../../db/database.ts'
import { ApiError, validationError } from '../../lib/errors.ts'
import { nowIso } from '../../lib/time.ts'
import {
  deleteIdempotencyRecordsBefore,
  deleteIdempotencyRecordsOf,
  findIdempotencyRecord,
  insertIdempotencyRecord,
} from './idempotency.repository.ts'

/** How long a stored response is replayed (docs/api.md#safe-retries-idempotency-key). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000
const MAX_KEY_LENGTH = 255

/** A response as it is stored and replayed. */
export interface StoredResponse {
  statusCode: number
  location: string | null
  /** The ETag the response carried (null: none; or stored before ETags were kept). */
  etag: string | null
  body: unknown
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same request body. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  return JSON.stringify(value) ?? 'null'
}

/** What identifies "the same request" for one key: method, path and body. */
export const requestFingerprint = (method: string, path: string, body: unknown): string =>
  createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest('hex')

/** Validates an `Idempotency-Key` header value; undefined when none was sent. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  const key = Array.isArray(header) ? header[0] : header
  if (
    key === undefined ||
    key.length === 0 ||
    key.length > MAX_KEY_LENGTH ||
    !/^[\x21-\x7e]+$/.test(key)
  )
    throw validationError(
      [
        {
          field: 'Idempotency-Key',
          message: `must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters`,
        },
      ],
      'Idempotency-Key header is invalid',
    )
  return key
}

export const idempotencyKeyReused = () =>
  new ApiError(
    422,
    'idempotencyKeyReused',
    'This Idempotency-Key was used with a different request; use a new key',
  )

/** Thrown inside a write when a concurrent request stored a response under the key first. */
export class IdempotencyRace extends Error {
  override name = 'IdempotencyRace'
}

const windowStart = () => new Date(Date.now() - IDEMPOTENCY_WINDOW_MS).toISOString()

/**
 * The stored response to replay for this key, or null when the key is new (or expired).
 * The same key with another request is refused with 422.
 */
export async function findReplay(
  db: Kysely<DB>,
  userId: string,
  key: string,
  fingerprint: string,
): Promise<StoredResponse | null> {
  const record = await findIdempotencyRecord(db, userId, key)
  if (!record || record.created_at < windowStart()) return null
  if (record.fingerprint !== fingerprint) throw idempotencyKeyReused()
  return {
    statusCode: Number(record.status_code),
    location: record.location,
    etag: record.etag,
    body: JSON.parse(record.body),
  }
}

/**
 * Stores a response under its key, inside the write's own transaction: the update and its
 * record commit together, so a retry can never apply the update a second time.
 */
export async function recordResponse(
  tx: Db,
  userId: string,
  key: string,
  fingerprint: string,
  response: StoredResponse,
): Promise<void> {
  const now = nowIso()
  // an expired record under this key gives way to the new one
  await tx
    .deleteFrom('idempotency_keys')
    .where('user_id', '=', userId)
    .where('key', '=', key)
    .where('created_at', '<', windowStart())
    .execute()
  const record: IdempotencyRecord = {
    user_id: userId,
    key,
    fingerprint,
    status_code: response.statusCode,
    location: response.location,
    etag: response.etag,
    body: JSON.stringify(response.body),
    created_at: now,
  }
  if (!(await insertIdempotencyRecord(tx, record))) throw new IdempotencyRace()
}

/**
 * Drops records past the replay window, `chunk` at a time (run at start and hourly); how many
 * it dropped.
 */
export async function pruneIdempotencyRecords(
  db: Kysely<DB>,
  { chunk = 1000 }: { chunk?: number } = {},
): Promise<number> {
  const before = windowStart()
  let pruned = 0
  for (;;) {
    const deleted = await deleteIdempotencyRecordsBefore(db, before, chunk)
    pruned += deleted
    if (deleted < chunk) return pruned
    // note: requests run between the chunks; one DELETE of every expired row held the event
    // loop (SQLite) for as long as it ran (docs/decisions/0016-bounded-work-on-large-tables.md)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/** Records a response inside the write's transaction. */
export type Recorder = (tx: Db, response: StoredResponse) => Promise<void>

/**
 * Runs a write at most once per Idempotency-Key (Stripe's semantics): a retry with the same
 * key and request gets the stored response replayed, and nothing is written again.
 * Only completed writes are stored; a request that failed may be retried with its key.
 */
export async function runIdempotent(
  db: Kysely<DB>,
  scope: { userId: string; key: string | undefined; fingerprint: string },
  write: (record: Recorder | undefined) => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  const { userId, key, fingerprint } = scope
  if (key === undefined) return { ...(await write(undefined)), replayed: false }
  const stored = await findReplay(db, userId, key, fingerprint)
  if (stored) return { ...stored, replayed: true }
  try {
    const recorder: Recorder = (tx, response) =>
      recordResponse(tx, userId, key, fingerprint, response)
    return { ...(await write(recorder)), replayed: false }
  } catch (err) {
    // a concurrent request with this key committed first; ours rolled back: replay theirs
    if (!(err instanceof IdempotencyRace)) throw err
    const winner = await findReplay(db, userId, key, fingerprint)
    if (!winner) throw err
    return { ...winner, replayed: true }
  }
}

/**
 * Forgets up to `limit` of a user's stored responses, in the caller's transaction (an account
 * deleted: its responses go in batches before the account's row); how many went.
 */
export const forgetResponsesOf = (tx: Db, userId: string, limit: number): Promise<number> =>
  deleteIdempotencyRecordsOf(tx, userId, limit)
