import { type Kysely, sql } from 'kysely'
import { DEFAULT_BATCH_SIZE } from './copy-defaults.ts'
import { createDatabase } from './create-database.ts'
import type { DB } from './database.ts'
import type { Database, DatabaseOptions } from './engine.ts'
import { engineForUrl } from './engines.ts'
import { executedMigrations, migrateToLatest, pendingMigrations } from './migrate.ts'

/** A table of statusd's schema: every one is copied. */
export type CopyTable = keyof DB & string
export type TableCounts = Record<CopyTable, number>

/**
 * Every table of statusd, in the order a copy writes them (a row's references come first),
 * each with its primary key: a table is read in its key's order, one page after another
 * (keyset paging). Typed by the schema (`DB`): a table that is not here, or a key column
 * that is not the table's, fails to compile, so no table is ever left out of a copy.
 */
export const PRIMARY_KEYS: { readonly [T in CopyTable]: readonly (keyof DB[T] & string)[] } = {
  users: ['id'],
  api_keys: ['id'],
  statuses: ['id'],
  status_history: ['status_id', 'change_no'],
  status_roles: ['status_id', 'user_id'],
  idempotency_keys: ['user_id', 'key'],
  // a copy taken mid-sweep carries what is left to sweep, so the target's sweep finishes it
  status_deletions: ['status_id'],
  sessions: ['id'],
  passkeys: ['id'],
  auth_tokens: ['id'],
  security_events: ['id'],
  role_invitations: ['id'],
  invitation_links: ['id'],
  invitation_mails: ['id'],
  share_links: ['id'],
  status_schedules: ['status_id'],
  boards: ['id'],
  channels: ['id'],
  notification_rules: ['status_id', 'user_id'],
  outbox_events: ['id'],
  deliveries: ['id'],
  delivery_attempts: ['id'],
  service_settings: ['name'],
  leases: ['name'],
}

/** statusd's tables in the order a copy writes them (PRIMARY_KEYS's order). */
export const COPY_TABLES = Object.keys(PRIMARY_KEYS) as readonly CopyTable[]

export { DEFAULT_BATCH_SIZE }

const MAX_PARAMETERS = 30_000

export interface CopyProgress {
  table: CopyTable
  /** Rows of this table copied so far, of its total. */
  copied: number
  total: number
  /** Rows of all tables copied so far, of all rows. */
  copiedAll: number
  totalAll: number
}

export interface CopyOptions {
  batchSize?: number
  /** Replace a target that already holds data. */
  force?: boolean
  onProgress?: (progress: CopyProgress) => void
}

export interface CopyResult {
  tables: TableCounts
  rows: number
  /** True when the target held data that the copy replaced. */
  replaced: boolean
}

/** A copy that cannot start: the operator gets the message as it is. */
export class CopyRefused extends Error {
  override name = 'CopyRefused'
}

/**
 * Opens a copy's source as its engine says it must be (copy.source): refused (CopyRefused)
 * when there is nothing there or it is not a database of that engine, since opening it could
 * create an empty one.
 */
export function openCopySource(url: string, options: DatabaseOptions = {}): Database {
  const checked = engineForUrl(url)?.copy.source(url)
  if (checked && 'refused' in checked) throw new CopyRefused(checked.refused)
  return createDatabase(url, { ...options, ...checked?.options })
}

/**
 * Opens a copy's target; `discard` removes what opening it created (a new, empty file),
 * for a copy that did not happen.
 */
export function openCopyTarget(
  url: string,
  options: DatabaseOptions = {},
): { database: Database; discard(): void } {
  const discard = engineForUrl(url)?.copy.discardNewTarget(url) ?? (() => {})
  return { database: createDatabase(url, options), discard }
}

// The copy moves rows whatever their table; this view of the schema lets one loop do it.
type Row = Record<string, unknown>
type AnyTables = Record<string, Row>

/** Row counts of statusd's tables. */
export async function countRows(db: Kysely<DB>): Promise<TableCounts> {
  const loose = db as unknown as Kysely<AnyTables>
  const counts = {} as TableCounts
  for (const table of COPY_TABLES) {
    const row = await loose
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow()
    counts[table] = Number(row.n)
  }
  return counts
}

const total = (counts: TableCounts) => COPY_TABLES.reduce((sum, t) => sum + counts[t], 0)

const NOUNS: Record<CopyTable, [string, string]> = {
  users: ['user', 'users'],
  api_keys: ['API key', 'API keys'],
  statuses: ['status', 'statuses'],
  status_history: ['history row', 'history rows'],
  status_roles: ['role', 'roles'],
  idempotency_keys: ['idempotent response', 'idempotent responses'],
  status_deletions: ['deleted status still swept', 'deleted statuses still swept'],
  sessions: ['session', 'sessions'],
  passkeys: ['passkey', 'passkeys'],
  auth_tokens: ['one-time token', 'one-time tokens'],
  security_events: ['security event', 'security events'],
  role_invitations: ['pending invitation', 'pending invitations'],
  invitation_links: ['invitation link', 'invitation links'],
  invitation_mails: ['invitation mail sent', 'invitation mails sent'],
  share_links: ['share link', 'share links'],
  status_schedules: ['schedule', 'schedules'],
  boards: ['board', 'boards'],
  channels: ['notification channel', 'notification channels'],
  notification_rules: ['notification rule', 'notification rules'],
  outbox_events: ['notification event', 'notification events'],
  deliveries: ['delivery', 'deliveries'],
  delivery_attempts: ['delivery attempt', 'delivery attempts'],
  service_settings: ['service setting', 'service settings'],
  leases: ['lease', 'leases'],
}

/** "3 users, 1 API key, …" for messages. */
export const describeCounts = (counts: TableCounts): string =>
  COPY_TABLES.map((t) => `${counts[t]} ${NOUNS[t][counts[t] === 1 ? 0 : 1]}`).join(', ')

/**
 * Copies every statusd row from `source` to `target` (any engine to any engine): the
 * target is migrated, then filled in one transaction, so a failed or interrupted copy leaves
 * it as it was. The source is read in one snapshot and never written.
 * A target that holds data is refused unless `force`, which replaces its contents; so
 * running the same copy again gives the same result.
 */
export async function copyDatabase(
  source: Kysely<DB>,
  target: Kysely<DB>,
  options: CopyOptions = {},
): Promise<CopyResult> {
  if ((await executedMigrations(source)).length === 0)
    throw new CopyRefused('the source is not a statusd database (no statusd migration applied)')
  // note: a pre-release's database too, until `statusd migrate` records it as migrated
  const pending = await pendingMigrations(source)
  if (pending.length > 0)
    throw new CopyRefused(
      `the source's schema is behind (pending: ${pending.join(', ')}); run \`statusd migrate\` on it first`,
    )
  await migrateToLatest(target)
  const before = await countRows(target)
  const replaced = total(before) > 0
  if (replaced && !options.force)
    throw new CopyRefused(
      `the target is not empty (${describeCounts(before)}); pass --force to replace its contents`,
    )

  // note: repeatable read gives PostgreSQL one snapshot for every table; on SQLite a read
  // transaction is a snapshot already (WAL), and the setting is ignored. Read only: on
  // SQLite it then begins DEFERRED and never holds the write lock of a source that serves
  // (sqlite-dialect.ts); begun IMMEDIATE, it stopped the server's writes for the whole copy
  return source
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (src) => {
      const totals = await countRows(src)
      const totalAll = total(totals)
      let copiedAll = 0
      return target.transaction().execute(async (dst) => {
        const out = dst as unknown as Kysely<AnyTables>
        if (replaced)
          for (const table of [...COPY_TABLES].reverse()) await out.deleteFrom(table).execute()
        for (const table of COPY_TABLES) {
          let copied = 0
          options.onProgress?.({ table, copied, total: totals[table], copiedAll, totalAll })
          for await (const rows of readInBatches(src, table, options.batchSize)) {
            await out.insertInto(table).values(rows).execute()
            copied += rows.length
            copiedAll += rows.length
            options.onProgress?.({ table, copied, total: totals[table], copiedAll, totalAll })
          }
        }
        const after = await countRows(dst)
        for (const table of COPY_TABLES)
          if (after[table] !== totals[table])
            throw new Error(
              `copy check failed: ${table} has ${after[table]} rows, source ${totals[table]}`,
            )
        return { tables: totals, rows: totalAll, replaced }
      })
    })
}

/** A table's rows in primary-key order, `batchSize` at a time. */
async function* readInBatches(
  db: Kysely<DB>,
  table: CopyTable,
  batchSize = DEFAULT_BATCH_SIZE,
): AsyncGenerator<Row[]> {
  const loose = db as unknown as Kysely<AnyTables>
  const keys = PRIMARY_KEYS[table]
  const limit = Math.max(1, Math.floor(batchSize))
  let after: Row | undefined
  for (;;) {
    let query = loose.selectFrom(table).selectAll()
    const last = after
    if (last) {
      // note: a row-value comparison, (k1, k2) > (v1, v2): both engines seek the primary key
      // straight to it. Spelt out as `k1 > v1 OR (k1 = v1 AND k2 > v2)`, SQLite scanned the
      // table from its start for every page, so a copy took time quadratic in the rows
      // (docs/decisions/0016-bounded-work-on-large-tables.md).
      query = query.where(
        sql<boolean>`(${sql.join(keys.map((k) => sql.ref(k)))}) > (${sql.join(keys.map((k) => last[k]))})`,
      )
    }
    for (const key of keys) query = query.orderBy(key)
    const rows = await query.limit(limit).execute()
    if (rows.length === 0) return
    // stay under the engines' parameter limits whatever the width of the table
    const width = Object.keys(rows[0] as Row).length
    const perInsert = Math.max(1, Math.floor(MAX_PARAMETERS / width))
    for (let i = 0; i < rows.length; i += perInsert) yield rows.slice(i, i + perInsert)
    after = rows[rows.length - 1]
    if (rows.length < limit) return
  }
}
