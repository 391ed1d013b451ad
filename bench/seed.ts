// Seeds a benchmark dataset: one user on an unlimited plan, N statuses with keys bench-0…,
// and on average H history rows per status (N × H in all), spread evenly (`uniform`) or
// Zipf-skewed (`zipf`: the status of rank k gets about C/k rows, at least 1). Writes ids.txt,
// keys.txt and meta.json beside the database.
//   node bench/seed.ts --dir /tmp/statusd-bench [--statuses 10000] [--history 1]
//                      [--distribution uniform|zipf] [--database-url …]
//
// The rows are what statusd itself would have written: statuses created one after another
// over the first half of a 30-day window, each value update a history row (the first one is
// the value given at creation), the updates of all statuses interleaved in time order, so a
// status's history is spread over the table as it is on a real server. change_count,
// version, value and the timestamps agree with the history. The schema is the migrations'
// own, indexes included; only the bulk phase writes around Kysely, straight through
// better-sqlite3 (prepared statements, large transactions, no journal or fsync while
// seeding) or, on PostgreSQL, statements that make the rows in the server (seedPostgres).

import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { createDatabase } from '../src/db/create-database.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { isPostgresUrl } from '../src/db/postgres/postgres-engine.ts'
import { sqlitePath } from '../src/db/sqlite/sqlite-engine.ts'
import { createApiKey } from '../src/modules/keys/keys.service.ts'
import { loadPlansFile } from '../src/modules/plans/plans.ts'
import { createUser } from '../src/modules/users/users.service.ts'

export type Distribution = 'uniform' | 'zipf'

export interface SeedOptions {
  dir: string
  statuses: number
  /** History rows per status, on average (N × history rows in all). */
  history: number
  /** How the history rows are spread over the statuses (default `uniform`). */
  distribution?: Distribution
  databaseUrl?: string
  /** Progress lines on stderr (default: for 100 000 statuses or more). */
  verbose?: boolean
}

export interface SeedResult {
  key: string
  userId: string
  databaseUrl: string
  idsFile: string
  keysFile: string
  statuses: number
  historyRows: number
  distribution: Distribution
  /** Most history rows of one status. */
  maxHistory: number
  seconds: number
}

const PLANS_FILE = new URL('./plans.json', import.meta.url).pathname
const DAY_MS = 86_400_000
/** The dataset's time window ends one minute before the seed runs. */
const WINDOW_MS = 30 * DAY_MS

/**
 * A dataset in `options.dir`: the one an earlier run left there if it has the same shape
 * (statuses, history rows, distribution), else a fresh one (1 M statuses take about two
 * minutes). On PostgreSQL (`databaseUrl`) the dataset is that database, dropped and created
 * again through `serverUrl` (a database to connect to on the same server) before seeding;
 * it is reused only if it carries the tag of the seeding that `dir` describes. `label`
 * prefixes the progress lines.
 */
export async function seedOrReuse(
  options: SeedOptions & { serverUrl?: string },
  label: string,
): Promise<SeedResult> {
  const { dir, statuses, databaseUrl, serverUrl } = options
  const postgres = databaseUrl !== undefined && isPostgresUrl(databaseUrl)
  if (postgres && serverUrl === undefined) throw new Error('seed: serverUrl is required')
  const historyRows = Math.round(statuses * options.history)
  const distribution = options.distribution ?? 'uniform'
  const metaFile = join(dir, 'meta.json')
  if (existsSync(metaFile) && (postgres || existsSync(join(dir, 'seed.db')))) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as SeedResult
    if (
      meta.statuses === statuses &&
      meta.historyRows === historyRows &&
      meta.distribution === distribution &&
      (!postgres ||
        (meta.databaseUrl === databaseUrl && (await seedTagOf(databaseUrl)) === seedTag(meta)))
    ) {
      console.error(`${label}: reusing ${dir} (seeded in ${meta.seconds.toFixed(0)} s)`)
      return meta
    }
  }
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  if (postgres) {
    const name = new URL(databaseUrl).pathname.slice(1)
    await dropDatabase(serverUrl as string, name)
    await createDatabaseOn(serverUrl as string, name)
  }
  console.error(
    `${label}: seeding ${statuses} statuses, ${historyRows} history rows (${distribution})`,
  )
  const data = await seed(options)
  if (postgres) await tagSeed(databaseUrl, seedTag(data))
  console.error(`${label}: seeded in ${data.seconds.toFixed(1)} s`)
  return data
}

/** What ties a seeded database to the meta.json that describes it (its user is random). */
const seedTag = (meta: SeedResult) =>
  `statusd bench seed 2: ${meta.statuses} statuses, ${meta.historyRows} history rows (${meta.distribution}), user ${meta.userId}`

/** A database named `name` on the server of `serverUrl` (same role and options). */
export function databaseOn(serverUrl: string, name: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${encodeURIComponent(name)}`
  return url.toString()
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * Creates database `name` on the server of `serverUrl`, empty or as a copy of `template`
 * (file by file where the server can: PostgreSQL 15's default logs every page of the copy).
 */
export async function createDatabaseOn(
  serverUrl: string,
  name: string,
  template?: string,
): Promise<void> {
  await withClient(serverUrl, async (client) => {
    const version = Number(
      (await client.query('show server_version_num')).rows[0].server_version_num,
    )
    const copy = template
      ? ` template ${client.escapeIdentifier(template)}${version >= 150000 ? ' strategy file_copy' : ''}`
      : ''
    await client.query(`create database ${client.escapeIdentifier(name)}${copy}`)
  })
}

/** Drops database `name` on the server of `serverUrl` if it exists. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await withClient(serverUrl, async (client) => {
    await client.query(`drop database if exists ${client.escapeIdentifier(name)} with (force)`)
  })
}

async function tagSeed(databaseUrl: string, tag: string): Promise<void> {
  await withClient(databaseUrl, async (client) => {
    const name = client.escapeIdentifier(
      (await client.query('select current_database() as d')).rows[0].d,
    )
    await client.query(`comment on database ${name} is ${client.escapeLiteral(tag)}`)
  })
}

/** The tag of a seeded database; null when there is no such database or no tag. */
async function seedTagOf(databaseUrl: string): Promise<string | null> {
  try {
    return await withClient(databaseUrl, async (client) => {
      const { rows } = await client.query(
        `select shobj_description(oid, 'pg_database') as tag from pg_database where datname = current_database()`,
      )
      return (rows[0]?.tag as string | null) ?? null
    })
  } catch (error) {
    if ((error as { code?: string }).code === '3D000') return null // no such database
    throw error
  }
}

/** A small deterministic PRNG (mulberry32), so a dataset's shape repeats run to run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * History rows per status: `total` rows over `n` statuses, evenly or Zipf-skewed. Which
 * status gets which share is a random permutation, so the busy ones are spread over the
 * creation order rather than all at its start.
 */
export function historyCounts(
  n: number,
  total: number,
  distribution: Distribution,
  random: () => number,
): Uint32Array {
  const counts = new Uint32Array(n)
  if (n === 0 || total === 0) return counts
  const byRank = new Float64Array(n)
  if (distribution === 'uniform') {
    for (let k = 0; k < n; k++) byRank[k] = Math.floor(total / n) + (k < total % n ? 1 : 0)
  } else {
    if (total < n) throw new Error('zipf needs at least one history row per status')
    // rank k (1-based) gets max(1, round(c / k)); find c by bisection so the sum is `total`
    const sum = (c: number) => {
      let s = 0
      for (let k = 1; k <= n; k++) s += Math.max(1, Math.round(c / k))
      return s
    }
    let lo = 0
    let hi = total
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (sum(mid) <= total) lo = mid
      else hi = mid
    }
    for (let k = 1; k <= n; k++) byRank[k - 1] = Math.max(1, Math.round(lo / k))
    // the rounding leaves a few rows over: the busiest status takes them
    byRank[0] = (byRank[0] as number) + total - sum(lo)
  }
  // Fisher–Yates: status i gets the share of a random rank
  const order = new Uint32Array(n)
  for (let i = 0; i < n; i++) order[i] = i
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const t = order[i] as number
    order[i] = order[j] as number
    order[j] = t
  }
  for (let i = 0; i < n; i++) counts[i] = byRank[order[i] as number] as number
  return counts
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const URL_SAFE = `${BASE62}-_`
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

/**
 * Random strings in the shapes of src/lib/ids.ts (status id: a base62 character and 20
 * URL-safe ones; share id: 8 base32 characters), drawn from one buffer of random bytes at
 * a time: a million of newId() would make three million small randomBytes calls.
 */
function randomStrings(): { id(): string; shareId(): string } {
  let pool = randomBytes(0)
  let at = 0
  const byte = () => {
    if (at === pool.length) {
      pool = randomBytes(1 << 16)
      at = 0
    }
    return pool[at++] as number
  }
  // rejection sampling, as ids.ts does, so every character is equally likely
  const char = (alphabet: string, mask: number) => {
    for (;;) {
      const i = byte() & mask
      if (i < alphabet.length) return alphabet[i] as string
    }
  }
  return {
    id() {
      let s = char(BASE62, 63)
      for (let k = 0; k < 20; k++) s += URL_SAFE[byte() & 63]
      return s
    },
    shareId() {
      let s = ''
      for (let k = 0; k < 8; k++) s += BASE32[byte() & 31]
      return s
    },
  }
}

/** One status row, in the migrations' column order. */
interface StatusSeed {
  id: string
  shareId: string
  key: string
  value: string | null
  colorNo: number
  changeCount: number
  createdAt: string
  updatedAt: string
  valueUpdatedAt: string | null
}

/** Where the rows go on SQLite, in large batches. */
interface Sink {
  statuses(rows: StatusSeed[]): Promise<void>
  /** Parallel columns of one batch of history rows. */
  history(ids: string[], changeNos: number[], values: string[], ats: string[]): Promise<void>
  /** Commits (ok) or abandons what was written. */
  close(ok: boolean): Promise<void>
}

const valueAt = (changeNo: number) => `${changeNo % 100}%`

/** Creates the dataset; returns where it is and the API key to drive it with. */
export async function seed(options: SeedOptions): Promise<SeedResult> {
  const started = performance.now()
  const n = options.statuses
  const total = Math.round(n * options.history)
  const distribution = options.distribution ?? 'uniform'
  const verbose = options.verbose ?? n >= 100_000
  const log = (line: string) => {
    if (verbose)
      process.stderr.write(`seed: ${((performance.now() - started) / 1000).toFixed(1)} s ${line}\n`)
  }
  const databaseUrl = options.databaseUrl ?? `sqlite:${join(options.dir, 'seed.db')}`

  // schema, user and key the way statusd makes them
  const database = createDatabase(databaseUrl)
  let userId: string
  let key: string
  try {
    await migrateToLatest(database.db)
    const plans = loadPlansFile(PLANS_FILE)
    const user = await createUser(database.db, plans, {
      name: 'bench',
      plan: 'unlimited',
      verified: true,
    })
    userId = user.id
    key = (await createApiKey(database.db, user.id, { label: 'bench' })).key
  } finally {
    await database.close()
  }

  const random = prng(0x5eed ^ n)
  const counts = historyCounts(n, total, distribution, random)
  const end = Date.now() - 60_000
  // note: an event's sort key is time × n + status index, exact below 2^53, so a dataset of
  // very many statuses gets a shorter window
  const window = Math.min(WINDOW_MS, Math.floor(2 ** 53 / Math.max(n, 1)) - 1)
  const base = end - window
  // statuses are created over the first half of the window, their updates spread evenly
  // from creation to its end (the first update is the value given at creation)
  const createdAt = (i: number) => Math.floor((i * (window / 2)) / Math.max(n, 1))
  const step = (i: number, count: number) => Math.floor((window - createdAt(i)) / count)
  let maxHistory = 0
  for (let i = 0; i < n; i++) {
    const c = counts[i] as number
    if (c > maxHistory) maxHistory = c
    if (c > 1 && step(i, c) < 1)
      throw new Error(`seed: ${c} history rows of one status do not fit in the time window`)
  }
  const iso = (t: number) => new Date(base + t).toISOString()

  const ids: string[] = new Array(n)
  const keys: string[] = new Array(n)
  if (isPostgresUrl(databaseUrl)) {
    await seedPostgres(databaseUrl, userId, { counts, createdAt, step, base, ids, keys }, log)
  } else {
    const sink = sqliteSink(sqlitePath(databaseUrl) as string, userId)
    try {
      const shareIds = new Set<string>()
      const draw = randomStrings()
      const BATCH = 20_000
      for (let from = 0; from < n; from += BATCH) {
        const rows: StatusSeed[] = []
        for (let i = from; i < Math.min(from + BATCH, n); i++) {
          const c = counts[i] as number
          // 40-bit share ids clash now and then among a million: draw again, as statusd does
          let shareId = draw.shareId()
          while (shareIds.has(shareId)) shareId = draw.shareId()
          shareIds.add(shareId)
          const id = draw.id()
          ids[i] = id
          keys[i] = `bench-${i}`
          const last = c > 0 ? iso(createdAt(i) + (c - 1) * step(i, c)) : null
          rows.push({
            id,
            shareId,
            key: `bench-${i}`,
            value: c > 0 ? valueAt(c) : null,
            colorNo: 1 + (i % 12),
            changeCount: c,
            createdAt: iso(createdAt(i)),
            updatedAt: last ?? iso(createdAt(i)),
            valueUpdatedAt: last,
          })
        }
        await sink.statuses(rows)
        if ((from / BATCH) % 10 === 9) log(`${from + rows.length} / ${n} statuses`)
      }
      log(`${n} statuses`)

      // every value update of every status as one number (time × n + status), sorted: the
      // order statusd would have written them in
      const events = new Float64Array(total)
      let e = 0
      for (let i = 0; i < n; i++) {
        const c = counts[i] as number
        const t0 = createdAt(i)
        const s = c > 0 ? step(i, c) : 0
        for (let j = 0; j < c; j++) events[e++] = (t0 + j * s) * n + i
      }
      events.sort()
      log(`${total} history rows ordered`)
      const changeNo = new Uint32Array(n)
      const BATCH_ROWS = 50_000
      for (let from = 0; from < total; from += BATCH_ROWS) {
        const to = Math.min(from + BATCH_ROWS, total)
        const hIds: string[] = []
        const hNos: number[] = []
        const hValues: string[] = []
        const hAts: string[] = []
        for (let k = from; k < to; k++) {
          const event = events[k] as number
          const i = event % n
          const no = (changeNo[i] as number) + 1
          changeNo[i] = no
          hIds.push(ids[i] as string)
          hNos.push(no)
          hValues.push(valueAt(no))
          hAts.push(iso((event - i) / n))
        }
        await sink.history(hIds, hNos, hValues, hAts)
        if ((from / BATCH_ROWS) % 20 === 19) log(`${to} / ${total} history rows`)
      }
      log(`${total} history rows`)
      await sink.close(true)
    } catch (error) {
      await sink.close(false).catch(() => {})
      throw error
    }
  }
  log('done')

  const idsFile = join(options.dir, 'ids.txt')
  const keysFile = join(options.dir, 'keys.txt')
  writeFileSync(idsFile, n ? `${ids.join('\n')}\n` : '')
  writeFileSync(keysFile, n ? `${keys.join('\n')}\n` : '')
  const result: SeedResult = {
    key,
    userId,
    databaseUrl,
    idsFile,
    keysFile,
    statuses: n,
    historyRows: total,
    distribution,
    maxHistory,
    seconds: (performance.now() - started) / 1000,
  }
  writeFileSync(join(options.dir, 'meta.json'), JSON.stringify(result, null, 2))
  return result
}

const STATUS_COLUMNS =
  'id, share_id, owner_id, status_key, name, type, value, access_type, description, color_no, access_type_user_list, access_type_history, change_count, created_at, updated_at, value_updated_at, version'
const HISTORY_COLUMNS = 'status_id, change_no, value, at, by_user_id'

/**
 * better-sqlite3 directly: the whole bulk phase is one transaction of prepared statements,
 * with no fsync, the rollback journal in memory and no foreign-key checks (the rows are
 * consistent by construction). The file goes back to WAL, as statusd runs it, at the end.
 * note: journal_mode=OFF would save a little more, but better-sqlite3 runs SQLite in
 * defensive mode, which refuses it; and a WAL file would take every page twice.
 */
function sqliteSink(file: string, userId: string): Sink {
  const db = new SQLite(file)
  db.pragma('journal_mode = MEMORY')
  db.pragma('synchronous = OFF')
  db.pragma('foreign_keys = OFF')
  // the indexes on random ids take random inserts: keep them in memory (1 GiB at most)
  db.pragma('cache_size = -1048576')
  const insertStatus = db.prepare(
    `insert into statuses (${STATUS_COLUMNS}) values (?, ?, ?, ?, ?, 'text', ?, 'private', '', ?, 'owner', 'private', ?, ?, ?, ?, ?)`,
  )
  const ROWS_PER_INSERT = 100
  const insertHistoryMany = db.prepare(
    `insert into status_history (${HISTORY_COLUMNS}) values ${Array(ROWS_PER_INSERT).fill('(?, ?, ?, ?, ?)').join(', ')}`,
  )
  const insertHistoryOne = db.prepare(
    `insert into status_history (${HISTORY_COLUMNS}) values (?, ?, ?, ?, ?)`,
  )
  const params: (string | number)[] = new Array(ROWS_PER_INSERT * 5)
  db.exec('begin')
  return {
    async statuses(rows) {
      for (const r of rows)
        insertStatus.run(
          r.id,
          r.shareId,
          userId,
          r.key,
          r.key,
          r.value,
          r.colorNo,
          r.changeCount,
          r.createdAt,
          r.updatedAt,
          r.valueUpdatedAt,
          Math.max(1, r.changeCount),
        )
    },
    async history(ids, nos, values, ats) {
      let k = 0
      for (; k + ROWS_PER_INSERT <= ids.length; k += ROWS_PER_INSERT) {
        for (let j = 0; j < ROWS_PER_INSERT; j++) {
          params[j * 5] = ids[k + j] as string
          params[j * 5 + 1] = nos[k + j] as number
          params[j * 5 + 2] = values[k + j] as string
          params[j * 5 + 3] = ats[k + j] as string
          params[j * 5 + 4] = userId
        }
        insertHistoryMany.run(params)
      }
      for (; k < ids.length; k++) insertHistoryOne.run(ids[k], nos[k], values[k], ats[k], userId)
    },
    async close(ok) {
      db.exec(ok ? 'commit' : 'rollback')
      db.pragma('journal_mode = WAL')
      db.close()
    },
  }
}

/** What the PostgreSQL seed needs of the dataset's shape (see seed). */
interface PostgresShape {
  /** History rows per status, by creation order. */
  counts: Uint32Array
  /** A status's creation time and the time between its updates, in ms from `base`. */
  createdAt(i: number): number
  step(i: number, count: number): number
  base: number
  /** Filled with each status's id and key. */
  ids: string[]
  keys: string[]
}

/** A timestamp in ms since the epoch (SQL expression) as statusd writes it (toISOString). */
const isoSql = (ms: string) =>
  `to_char(timestamp '1970-01-01' + (${ms}) * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/**
 * PostgreSQL: the server generates the rows itself. Only each status's plan crosses the
 * wire (id, share id, history count, creation time and update step, as arrays); the
 * statuses and their history rows are then one INSERT … SELECT each, the history from
 * generate_series in the order statusd would have written it. The indexes of both tables
 * but statuses' primary key (which other tables' foreign keys hold on to) are dropped first
 * and built again from their own definitions (pg_get_constraintdef, pg_get_indexdef): one
 * sort each instead of millions of inserts at random places. Then VACUUM ANALYZE, as
 * autovacuum does soon after a bulk load (the planner's statistics, the visibility map).
 *
 * The statuses' pages keep room for about one row version each (fillfactor 95 while they
 * are written, the table's own setting afterwards), as the updates their history records
 * would have left them: each update leaves a dead version that pruning turns into free
 * space on its page. Packed full, as a bulk load leaves them, the first update of a row
 * cannot stay on its page and adds an entry to each of the table's six indexes, which a
 * server that has been updating its statuses no longer pays
 * (docs/decisions/0013-postgresql-at-a-million-statuses.md).
 */
async function seedPostgres(
  url: string,
  userId: string,
  shape: PostgresShape,
  log: (line: string) => void,
): Promise<void> {
  const { counts, ids, keys } = shape
  const n = counts.length
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('begin')
    // one bulk transaction: its commit need not wait for the flush; sorts in memory
    await client.query('set local synchronous_commit = off')
    await client.query("set local work_mem = '256MB'")
    await client.query("set local maintenance_work_mem = '512MB'")
    await client.query(
      'create temporary table seed_plan (i integer, id text, share_id text, c bigint, t0 bigint, step bigint) on commit drop',
    )
    const shareIds = new Set<string>()
    const draw = randomStrings()
    const BATCH = 100_000
    for (let from = 0; from < n; from += BATCH) {
      const to = Math.min(from + BATCH, n)
      const columns: [number[], string[], string[], number[], number[], number[]] = [
        [],
        [],
        [],
        [],
        [],
        [],
      ]
      for (let i = from; i < to; i++) {
        const c = counts[i] as number
        // 40-bit share ids clash now and then among a million: draw again, as statusd does
        let shareId = draw.shareId()
        while (shareIds.has(shareId)) shareId = draw.shareId()
        shareIds.add(shareId)
        ids[i] = draw.id()
        keys[i] = `bench-${i}`
        columns[0].push(i)
        columns[1].push(ids[i] as string)
        columns[2].push(shareId)
        columns[3].push(c)
        columns[4].push(shape.createdAt(i))
        columns[5].push(c > 0 ? shape.step(i, c) : 0)
      }
      await client.query(
        'insert into seed_plan select * from unnest($1::int[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])',
        columns,
      )
    }
    log(`${n} statuses planned`)
    const indexes = await dropIndexes(client, ['statuses', 'status_history'])
    const { rows: options } = await client.query<{ fillfactor: string | null }>(
      `select (select substr(o, length('fillfactor=') + 1) from unnest(reloptions) o
         where o like 'fillfactor=%') as fillfactor
       from pg_class where oid = 'statuses'::regclass`,
    )
    const fillfactor = options[0]?.fillfactor ?? null
    await client.query('alter table statuses set (fillfactor = 95)')
    await client.query(
      `insert into statuses (${STATUS_COLUMNS})
       select id, share_id, $1, 'bench-' || i, 'bench-' || i, 'text',
         case when c > 0 then (c % 100) || '%' end, 'private', '', 1 + i % 12, 'owner',
         'private', c, ${isoSql('$2::bigint + t0')}, ${isoSql('$2::bigint + last')},
         case when c > 0 then ${isoSql('$2::bigint + last')} end, greatest(c, 1)
       from seed_plan cross join lateral (select t0 + greatest(c - 1, 0) * step as last) l
       order by i`,
      [userId, shape.base],
    )
    await client.query(
      fillfactor === null
        ? 'alter table statuses reset (fillfactor)'
        : `alter table statuses set (fillfactor = ${Number(fillfactor)})`,
    )
    log(`${n} statuses`)
    // change k of a status is at t0 + (k − 1) × step; all statuses' changes in time order
    const { rowCount } = await client.query(
      `insert into status_history (${HISTORY_COLUMNS})
       select p.id, g.no, (g.no % 100) || '%', ${isoSql('$2::bigint + p.t0 + (g.no - 1) * p.step')}, $1
       from seed_plan p cross join lateral generate_series(1, p.c) as g(no)
       order by p.t0 + (g.no - 1) * p.step, p.i`,
      [userId, shape.base],
    )
    log(`${rowCount} history rows`)
    for (const { sql } of indexes) await client.query(sql)
    log(`${indexes.length} indexes built`)
    await client.query('commit')
  } catch (error) {
    await client.query('rollback').catch(() => {})
    throw error
  } finally {
    await client.end()
  }
  // outside the transaction (VACUUM cannot run in one)
  const again = new pg.Client({ connectionString: url })
  await again.connect()
  try {
    await again.query('vacuum analyze statuses, status_history')
  } finally {
    await again.end()
  }
  log('vacuumed and analyzed')
}

/**
 * Drops the tables' indexes and unique constraints, except those a foreign key needs;
 * returns the statements that make them again, exactly as they were.
 */
async function dropIndexes(client: pg.Client, tables: string[]): Promise<{ sql: string }[]> {
  const { rows } = await client.query<{
    table: string
    name: string
    def: string
    constraint: boolean
  }>(
    `select c.conrelid::regclass::text as table, c.conname as name,
       pg_get_constraintdef(c.oid) as def, true as constraint
     from pg_constraint c
     where c.conrelid = any($1::regclass[]) and c.contype in ('p', 'u', 'x')
       and not exists (select 1 from pg_constraint f where f.contype = 'f' and f.conindid = c.conindid)
     union all
     select i.indrelid::regclass::text, x.relname, pg_get_indexdef(i.indexrelid), false
     from pg_index i join pg_class x on x.oid = i.indexrelid
     where i.indrelid = any($1::regclass[])
       and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
    [tables],
  )
  const make: { sql: string }[] = []
  for (const r of rows) {
    const name = client.escapeIdentifier(r.name)
    if (r.constraint) {
      await client.query(`alter table ${r.table} drop constraint ${name}`)
      make.push({ sql: `alter table ${r.table} add constraint ${name} ${r.def}` })
    } else {
      await client.query(`drop index ${name}`)
      make.push({ sql: r.def })
    }
  }
  return make
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      statuses: { type: 'string', default: '10000' },
      history: { type: 'string', default: '1' },
      distribution: { type: 'string', default: 'uniform' },
      'database-url': { type: 'string' },
    },
  })
  if (!values.dir) throw new Error('--dir is required')
  if (values.distribution !== 'uniform' && values.distribution !== 'zipf')
    throw new Error('--distribution is uniform or zipf')
  const result = await seed({
    dir: values.dir,
    statuses: Number(values.statuses),
    history: Number(values.history),
    distribution: values.distribution,
    ...(values['database-url'] && { databaseUrl: values['database-url'] }),
  })
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
