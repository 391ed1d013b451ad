import { PostgresAdapter, sql } from 'kysely'
import type { Engine, WriteRefusal } from '../engine.ts'
import { openPostgres } from './open-postgres.ts'
import { postgresBackupSupport } from './pg-backup.ts'
import { postgresMigrationSteps } from './postgres-migration-steps.ts'
import { PostgresUrlError, parsePostgresUrl, redactPostgresUrl } from './postgres-url.ts'

/** True for `postgres://…` and `postgresql://…` URLs. */
export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url)

// Socket-level failures reaching the server (Node's error codes).
const UNAVAILABLE_NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
])

// SQLSTATEs meaning "the server cannot serve now": class 08 (connection exception) is matched
// by prefix; 53300 too many connections, 53xxx out of resources; 57P01..57P03 admin/crash
// shutdown and "cannot connect now" (starting up, shutting down).
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|53[0-9A-Z]{3}|57P0[1-3])$/

// pg raises these without a code: a connection lost mid-query, a pool that could not hand
// out a connection in time, a client whose connection already failed.
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Query read timeout)/

// Writes refused: 53100 disk full; 25006 a read-only transaction (a standby after a failover,
// default_transaction_read_only), which is also 'unavailable' (no other SQLSTATE of class 25 is).
const WRITE_REFUSALS: Record<string, WriteRefusal> = { '53100': 'full', '25006': 'readOnly' }

// The server refusing the database as set up, not a fault of statusd: no such database
// (3D000), no such schema (3F000), a login refused (class 28), a missing privilege (42501).
const SETUP_SQLSTATE = /^(3D000|3F000|28[0-9A-Z]{3}|42501)$/

/** PostgreSQL: a server that several instances share, commits in parallel. */
export const postgresEngine: Engine = {
  name: 'postgres',
  urlForms: ['postgres://…'],
  recognizes: isPostgresUrl,
  // note: the URL is not echoed: it may hold a password. Several hosts and
  // target_session_attrs as libpq reads them (docs/postgres.md#failover)
  problemWithUrl(url) {
    try {
      parsePostgresUrl(url)
      return undefined
    } catch (err) {
      if (err instanceof PostgresUrlError) return err.message
      throw err
    }
  },
  redactUrl: redactPostgresUrl,
  open: openPostgres,
  ownsAdapter: (adapter) => adapter instanceof PostgresAdapter,
  // note: READ COMMITTED lets concurrent writers read the same row; locked from the read on,
  // they take turns, so `If-Match` and every other check on the row read hold when the
  // write lands (without it, 20 writes with one `If-Match` all succeeded)
  lockRows: (query) => query.forUpdate(),
  claimRows: (query) => query.forUpdate().skipLocked(),
  // a transaction-scoped advisory lock on a 64-bit hash of the name (a hash collision only
  // serialises two unrelated transactions)
  async advisoryLock(tx, name) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(tx)
  },
  classifyError({ code, message }) {
    if (
      typeof code === 'string' &&
      (UNAVAILABLE_NETWORK.has(code) || UNAVAILABLE_SQLSTATE.test(code) || code === '25006')
    )
      return 'unavailable'
    if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return 'unavailable'
    if (code === '22021') return 'unstorable'
    if (typeof code === 'string' && SETUP_SQLSTATE.test(code)) return 'setup'
    return undefined
  },
  writeRefusal: ({ code }) =>
    typeof code === 'string' && Object.hasOwn(WRITE_REFUSALS, code)
      ? WRITE_REFUSALS[code]
      : undefined,
  migrationSteps: postgresMigrationSteps,
  copy: {
    // a server is there or it is not; opening creates nothing
    source: () => ({ options: {} }),
    discardNewTarget: () => () => {},
  },
  backup: postgresBackupSupport,
}
