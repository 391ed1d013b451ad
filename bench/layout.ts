// A/B of a table's layout on SQLite: one dataset stored both ways, with the table as a
// rowid table plus a separate index on its primary key (before) and as a WITHOUT ROWID
// table stored in primary-key order (after). `--table history` compares migration
// 2026-11-24T000000-clustered-history (status_history, clustered on (status_id, change_no)),
// `--table statuses` migration 2026-11-24T010000-clustered-statuses (statuses, on id). Both
// files are open in one process and the calls alternate between them, so whatever else the
// machine does hits both alike. Prints:
//   - how long the migration takes at this size (rowid → clustered);
//   - pages written to the write-ahead log per PATCH, each committed alone (deterministic);
//   - a history page (50 entries), an owned-status list page (50 statuses) and a PATCH
//     rolled back: p50 and p99 of the database work in process, no HTTP.
//   node bench/layout.ts [--table history|statuses] [--dir /tmp/statusd-layout]
//                        [--statuses 1000000] [--history 10] [--samples 2000] [--no-write]
// The result is printed and written to bench/results/ (not with --no-write).
// A seed.db already in --dir (from bench/seed.ts, of any layout) is reused.
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { type Kysely, sql } from 'kysely'
import { createDatabase } from '../src/db/create-database.ts'
import type { DB } from '../src/db/database.ts'
import * as clusteredHistory from '../src/db/migrations/2026-11-24T000000-clustered-history.ts'
import * as clusteredStatuses from '../src/db/migrations/2026-11-24T010000-clustered-statuses.ts'
import { transactionPerWrite } from '../src/db/writer.ts'
import { loadPlansFile } from '../src/modules/plans/plans.ts'
import { listHistory } from '../src/modules/statuses/history.repository.ts'
import { listOwnedStatuses } from '../src/modules/statuses/statuses.repository.ts'
import { updateStatusById } from '../src/modules/statuses/statuses.service.ts'
import { rollbackWriter } from './query-plans.ts'
import { type LayoutResult, runInfo, writeResult } from './results.ts'
import { PLANS_FILE, ROOT } from './rig.ts'
import { seed } from './seed.ts'

const { values } = parseArgs({
  options: {
    table: { type: 'string', default: 'history' },
    dir: { type: 'string', default: '/tmp/statusd-layout' },
    statuses: { type: 'string', default: '1000000' },
    history: { type: 'string', default: '10' },
    samples: { type: 'string', default: '2000' },
    'no-write': { type: 'boolean', default: false },
  },
})
const TABLES = {
  history: { table: 'status_history', migration: clusteredHistory },
  statuses: { table: 'statuses', migration: clusteredStatuses },
} as const
if (values.table !== 'history' && values.table !== 'statuses')
  throw new Error('--table is history or statuses')
const { table: TABLE, migration } = TABLES[values.table]
const DIR = values.dir
const SAMPLES = Number(values.samples)
const log = (line: string) => console.error(`layout: ${line}`)

const seedFile = join(DIR, 'seed.db')
if (!existsSync(seedFile))
  await seed({
    dir: DIR,
    statuses: Number(values.statuses),
    history: Number(values.history),
    distribution: 'zipf',
  })
const meta = JSON.parse(readFileSync(join(DIR, 'meta.json'), 'utf8')) as { userId: string }
const ids = readFileSync(join(DIR, 'ids.txt'), 'utf8').trim().split('\n')

const clustered = async (db: Kysely<DB>) =>
  (await sql<{ wr: number }>`select wr from pragma_table_list(${TABLE})`.execute(db)).rows[0]
    ?.wr === 1

/** Copies `from` to `to` and brings it to the layout wanted; returns the seconds that took. */
async function layoutCopy(from: string, to: string, wantClustered: boolean): Promise<number> {
  for (const f of [to, `${to}-wal`, `${to}-shm`]) rmSync(f, { force: true })
  copyFileSync(from, to)
  const database = createDatabase(`sqlite:${to}`)
  try {
    if ((await clustered(database.db)) === wantClustered) return 0
    const started = performance.now()
    await (wantClustered ? migration.up : migration.down)(database.db as Kysely<unknown>)
    return (performance.now() - started) / 1000
  } finally {
    await database.close()
  }
}

const rowidFile = join(DIR, 'rowid.db')
const clusteredFile = join(DIR, 'clustered.db')
const downSeconds = await layoutCopy(seedFile, rowidFile, false)
if (downSeconds) log(`seed was clustered: rebuilt as a rowid table in ${downSeconds.toFixed(1)} s`)
const upSeconds = await layoutCopy(rowidFile, clusteredFile, true)
const layouts = [
  { name: 'rowid table + primary-key index (before)', file: rowidFile },
  { name: 'WITHOUT ROWID, clustered (after)', file: clusteredFile },
].map((l) => ({ ...l, database: createDatabase(`sqlite:${l.file}`) }))
const plans = loadPlansFile(PLANS_FILE)
const caller = { userId: meta.userId, plan: 'unlimited' }

// targets: random history rows (so a status is picked in proportion to its history), read
// by rowid from a copy whose history has one; PATCH and list targets: random statuses
const rowidDb = layouts[0]?.database.db as Kysely<DB>
const count = async (table: string) =>
  Number(
    (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(rowidDb))
      .rows[0]?.n,
  )
const [statusCount, historyRows] = [await count('statuses'), await count('status_history')]
log(
  `migration rowid → clustered: ${upSeconds.toFixed(1)} s for ${TABLE === 'statuses' ? `${statusCount} statuses` : `${historyRows} history rows`}`,
)
const random = (n: number) => 1 + Math.floor(Math.random() * n)
const randomStatus = () => ids[random(ids.length) - 1] as string
const pages: { statusId: string; before: number }[] = []
while (pages.length < SAMPLES) {
  // note: with both layouts clustered, no history rowid to pick by: a random entry of a
  // random status instead
  const { rows } =
    TABLE === 'status_history'
      ? await sql<{ status_id: string; change_no: number }>`
          select status_id, change_no from status_history where rowid = ${random(historyRows)}`.execute(
          rowidDb,
        )
      : await sql<{ status_id: string; change_no: number }>`
          select id as status_id, abs(random()) % change_count + 1 as change_no from statuses
          where id = ${randomStatus()} and change_count > 0`.execute(rowidDb)
  if (rows[0]) pages.push({ statusId: rows[0].status_id, before: rows[0].change_no + 1 })
}
const lists: { createdAt: string; id: string }[] = []
for (let i = 0; i < SAMPLES; i++) {
  const { rows } = await sql<{ created_at: string; id: string }>`
    select created_at, id from statuses where id = ${randomStatus()}`.execute(rowidDb)
  if (rows[0]) lists.push({ createdAt: rows[0].created_at, id: rows[0].id })
}
const patches = Array.from({ length: SAMPLES }, randomStatus)

/** Times `call` on every layout, alternating which goes first; per layout the sorted µs. */
async function alternate<T>(
  targets: T[],
  call: (db: Kysely<DB>, target: T) => Promise<unknown>,
): Promise<number[][]> {
  const took = layouts.map(() => [] as number[])
  for (const [i, target] of targets.entries()) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0]
    for (const l of order) {
      const started = performance.now()
      await call(layouts[l]?.database.db as Kysely<DB>, target)
      took[l]?.push((performance.now() - started) * 1000)
    }
  }
  return took.map((t) => t.sort((a, b) => a - b))
}
const at = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0

const historyPage = (db: Kysely<DB>, t: { statusId: string; before: number }) =>
  listHistory(db, t.statusId, { cutoff: null, keepChangeNo: 0, before: t.before, limit: 50 })
const listPage = (db: Kysely<DB>, after: { createdAt: string; id: string }) =>
  listOwnedStatuses(db, caller.userId, { limit: 51, after })
const rolledBackPatch = (db: Kysely<DB>, id: string) =>
  updateStatusById({ db, plans, writer: rollbackWriter(db) }, caller, id, { value: '80%' })

// warm-up (statement cache, JIT), then the measured runs
await alternate(pages.slice(0, 200), historyPage)
await alternate(lists.slice(0, 200), listPage)
await alternate(patches.slice(0, 200), rolledBackPatch)
const reads = await alternate(pages, historyPage)
const listed = await alternate(lists, listPage)
const writes = await alternate(patches, rolledBackPatch)

// pages per committed PATCH: each commits alone, with no checkpoint in between (statusd's
// connection never checkpoints by itself), so the log holds exactly the pages each commit
// dirtied; it is emptied first and its frames counted after
const committed = patches.slice(0, 500)
const frames: number[] = []
const usedMb: number[] = []
const checkpoint = async (db: Kysely<DB>, mode: 'TRUNCATE' | 'PASSIVE') =>
  Number(
    (await sql.raw<{ log: number }>(`pragma wal_checkpoint(${mode})`).execute(db)).rows[0]?.log,
  )
for (const l of layouts) {
  const db = l.database.db
  await checkpoint(db, 'TRUNCATE')
  const deps = { db, plans, writer: transactionPerWrite(db) }
  for (const id of committed) await updateStatusById(deps, caller, id, { value: '80%' })
  frames.push((await checkpoint(db, 'PASSIVE')) / committed.length)
  // pages in use: a rebuild leaves the old table's pages free in the file until a VACUUM
  const used = await sql<{ n: number }>`select page_size * (page_count - freelist_count) as n
    from pragma_page_size(), pragma_page_count(), pragma_freelist_count()`.execute(db)
  usedMb.push(Number(used.rows[0]?.n) / 2 ** 20)
}
for (const l of layouts) await l.database.close()

const rows = layouts.map(
  (l, i) =>
    `| ${l.name} | ${usedMb[i]?.toFixed(0)} MB | ${at(reads[i] ?? [], 0.5).toFixed(0)} µs | ${at(reads[i] ?? [], 0.99).toFixed(0)} µs | ${at(listed[i] ?? [], 0.5).toFixed(0)} µs | ${at(listed[i] ?? [], 0.99).toFixed(0)} µs | ${at(writes[i] ?? [], 0.5).toFixed(0)} µs | ${at(writes[i] ?? [], 0.99).toFixed(0)} µs | ${frames[i]?.toFixed(2)} |`,
)
const command = `npm run bench:layout -- --table ${values.table} --statuses ${values.statuses} --history ${values.history} --samples ${SAMPLES}`
const us = (sorted: number[] | undefined, q: number) => Math.round(at(sorted ?? [], q))
const result: LayoutResult = {
  ...runInfo(
    ROOT,
    command,
    `${statusCount} statuses, ${historyRows} history rows (Zipf-skewed); ${SAMPLES} history pages (50 entries below ${TABLE === 'status_history' ? 'a random history row' : 'a random entry of a random status'}), ${SAMPLES} owned-status list pages (50 after a random status) and ${SAMPLES} PATCHes rolled back, alternating between the two files in one process; then ${committed.length} PATCHes committed one by one on each.`,
  ),
  kind: 'layout',
  engine: 'sqlite',
  params: {
    table: values.table,
    statuses: Number(values.statuses),
    history: Number(values.history),
    samples: SAMPLES,
  },
  migrationS: Number(upSeconds.toFixed(1)),
  layouts: layouts.map((l, i) => ({
    layout: i === 0 ? 'rowid' : 'clustered',
    label: l.name,
    databaseMb: Math.round(usedMb[i] ?? 0),
    historyPageP50Us: us(reads[i], 0.5),
    historyPageP99Us: us(reads[i], 0.99),
    listPageP50Us: us(listed[i], 0.5),
    listPageP99Us: us(listed[i], 0.99),
    patchRolledBackP50Us: us(writes[i], 0.5),
    patchRolledBackP99Us: us(writes[i], 0.99),
    pagesLoggedPerPatch: Number(frames[i]?.toFixed(2)),
  })),
}
const section = [
  command,
  '',
  `| ${TABLE} stored as | database (pages in use) | history page p50 | p99 | list page p50 | p99 | PATCH (rolled back) p50 | p99 | pages logged per committed PATCH |`,
  '|---|---|---|---|---|---|---|---|---|',
  ...rows,
  '',
  `The migration took ${upSeconds.toFixed(1)} s.`,
].join('\n')
process.stdout.write(`\n${section}\n`)
if (!values['no-write']) writeResult(result)
