// The query plans of statusd's hot paths on a seeded database: the statements the real
// services run (captured through Kysely's query log) for a list page, a history page and a
// PATCH, each put to the engine's EXPLAIN (SQLite: EXPLAIN QUERY PLAN; PostgreSQL: EXPLAIN).
// The PATCH runs in a transaction that is rolled back, so the dataset does not change.
// --analyze (PostgreSQL): EXPLAIN (ANALYZE, BUFFERS, WAL) instead, each statement run in a
// transaction that is rolled back: the time, the pages read and dirtied, the WAL written.
//   node bench/query-plans.ts --database-url sqlite:/tmp/statusd-scale-…/seed.db
//   node bench/query-plans.ts --analyze --database-url postgres://…/statusd_scale_1000000_h10_zipf
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'
import { type CompiledQuery, Kysely, type LogEvent, PostgresDialect, SqliteDialect } from 'kysely'
import pg from 'pg'
import type { DB } from '../src/db/database.ts'
import { isPostgresUrl } from '../src/db/postgres/postgres-engine.ts'
import { sqlitePath } from '../src/db/sqlite/sqlite-engine.ts'
import type { Writer } from '../src/db/writer.ts'
import { encodeCursor } from '../src/lib/cursor.ts'
import type { Plans } from '../src/modules/plans/plans.ts'
import { listStatusHistory } from '../src/modules/statuses/history.service.ts'
import { accessById } from '../src/modules/statuses/sharing.service.ts'
import { listOwned, updateStatusById } from '../src/modules/statuses/statuses.service.ts'

export interface PlannedStatement {
  sql: string
  plan: string[]
  /** A full scan, or a sort the index does not give (a temp B-tree on SQLite). */
  suspicious: boolean
}

export interface PlannedOperation {
  operation: string
  statements: PlannedStatement[]
}

/** Where in the dataset to look: a deep list position and a deep history position. */
export interface PlanSample {
  userId: string
  /** A status past the middle of the list: the list page starts after it. */
  listAfter: { id: string; createdAt: string }
  /** A status with a long history, and a change number deep in it. */
  historyStatusId: string
  historyBefore: number
}

class Rollback extends Error {
  readonly value: unknown
  constructor(value: unknown) {
    super('rollback')
    this.value = value
  }
}

/** Runs each write in its own transaction and rolls it back: plans and timings, not changes. */
export const rollbackWriter = (db: Kysely<DB>): Writer => ({
  async run(work) {
    try {
      await db.transaction().execute(async (tx) => {
        throw new Rollback(await work(tx))
      })
    } catch (error) {
      if (error instanceof Rollback) return error.value as never
      throw error
    }
    throw new Error('unreachable')
  },
})

const PLANS_WITHOUT_RETENTION: Plans = {
  unlimited: {
    descriptionLinks: true,
    accessSettings: true,
    maxStatuses: null,
    requestsPerMinute: null,
    historyDays: null,
  },
}
// the same user on a plan that keeps a year of history (as `pro` does): reads filter by
// age, and every value update prunes
const PLANS_WITH_RETENTION: Plans = {
  unlimited: { ...(PLANS_WITHOUT_RETENTION.unlimited as Plans[string]), historyDays: 365 },
}

const PAGE = 50

/** Captures the statements of each hot path and explains them. */
export async function explainHotPaths(
  databaseUrl: string,
  sample: PlanSample,
  options: { analyze?: boolean } = {},
): Promise<PlannedOperation[]> {
  let captured: CompiledQuery[] = []
  const log = (event: LogEvent) => {
    captured.push(event.query)
  }
  const postgres = isPostgresUrl(databaseUrl)
  if (options.analyze && !postgres) throw new Error('query-plans: --analyze is for PostgreSQL')
  const sqlite = postgres ? null : new SQLite(sqlitePath(databaseUrl) as string)
  const pool = postgres ? new pg.Pool({ connectionString: databaseUrl, max: 1 }) : null
  const db = new Kysely<DB>({
    dialect: pool
      ? new PostgresDialect({ pool })
      : new SqliteDialect({ database: sqlite as SQLite.Database }),
    log,
  })
  const explain = async (query: CompiledQuery): Promise<string[]> => {
    if (sqlite)
      return (
        sqlite
          .prepare(`explain query plan ${query.sql}`)
          .all(...(query.parameters as unknown[])) as { detail: string }[]
      ).map((r) => r.detail)
    const client = await (pool as pg.Pool).connect()
    try {
      // analyzed, a statement runs: in a transaction that is rolled back
      if (options.analyze) await client.query('begin')
      const { rows } = await client.query(
        `explain ${options.analyze ? '(analyze, buffers, wal) ' : ''}${query.sql}`,
        query.parameters as unknown[],
      )
      return rows.map((r: Record<string, string>) => r['QUERY PLAN'] as string)
    } finally {
      if (options.analyze) await client.query('rollback')
      client.release()
    }
  }
  const caller = { userId: sample.userId, plan: 'unlimited' }
  const listCursor = encodeCursor([sample.listAfter.createdAt, sample.listAfter.id])
  const historyCursor = encodeCursor([String(sample.historyBefore)])
  const operations: [string, Plans, () => Promise<unknown>][] = [
    [
      `list page: GET /v1/user/status?limit=${PAGE}&cursor=… (deep in the list)`,
      PLANS_WITHOUT_RETENTION,
      () =>
        listOwned({ db, plans: PLANS_WITHOUT_RETENTION }, caller, {
          limit: PAGE,
          cursor: listCursor,
        }),
    ],
    ...([PLANS_WITHOUT_RETENTION, PLANS_WITH_RETENTION] as const).flatMap(
      (plans): [string, Plans, () => Promise<unknown>][] => {
        const retention = plans === PLANS_WITH_RETENTION ? ', owner keeps 365 days' : ''
        return [
          [
            `history page: GET /v1/status/:id/history?limit=${PAGE}&cursor=… (deep in a long history${retention})`,
            plans,
            async () =>
              listStatusHistory(
                { db, plans },
                await accessById(db, caller, sample.historyStatusId),
                { limit: PAGE, cursor: historyCursor },
              ),
          ],
          [
            `PATCH /v1/status/:id {"value":"80%"} (a status with a long history${retention})`,
            plans,
            () =>
              updateStatusById(
                { db, plans, writer: rollbackWriter(db) },
                caller,
                sample.historyStatusId,
                { value: '80%' },
              ),
          ],
        ]
      },
    ),
  ]
  const result: PlannedOperation[] = []
  try {
    for (const [operation, , run] of operations) {
      captured = []
      await run()
      const seen = new Set<string>()
      const statements: PlannedStatement[] = []
      for (const query of captured) {
        // the transaction around the PATCH has no plan
        if (seen.has(query.sql) || /^(begin|commit|rollback)\b/i.test(query.sql)) continue
        seen.add(query.sql)
        const plan = await explain(query)
        const suspicious = plan.some((line) =>
          sqlite ? /^SCAN |TEMP B-TREE/.test(line) : /Seq Scan|^\s*(->\s*)?Sort\b/.test(line),
        )
        statements.push({ sql: query.sql, plan, suspicious })
      }
      result.push({ operation, statements })
    }
  } finally {
    await db.destroy()
  }
  return result
}

/**
 * The plans as Markdown: each operation, its statements and their plans; `compact` gives one
 * line per operation with its plans only (the SQL is the same from run to run).
 */
export function plansToMarkdown(operations: PlannedOperation[], compact = false): string {
  const out: string[] = []
  for (const op of operations) {
    if (compact) {
      const plans = op.statements.flatMap((s) =>
        s.plan.map((line) => `\`${line.trim()}\`${s.suspicious ? ' ⚠' : ''}`),
      )
      out.push(`- ${op.operation}: ${plans.join('; ')}`)
      continue
    }
    out.push(`- ${op.operation}:`)
    for (const s of op.statements) {
      out.push(`  - \`${s.sql.replace(/\s+/g, ' ')}\``)
      if (s.plan.length === 0) out.push('    - (no plan: a plain insert)')
      for (const line of s.plan) out.push(`    - \`${line.trim()}\`${s.suspicious ? ' ⚠' : ''}`)
    }
  }
  return out.join('\n')
}

/** Picks the sample from the database itself: a deep list position, the longest history. */
export async function samplePositions(databaseUrl: string): Promise<PlanSample> {
  const q = {
    user: 'select owner_id as "userId" from statuses limit 1',
    count: 'select count(*) as n from statuses',
    // note: statuses are listed by (created_at, id); the seed creates them in that order
    at: 'select id, created_at as "createdAt" from statuses order by created_at, id limit 1 offset ',
    busiest: 'select id, change_count as n from statuses order by change_count desc limit 1',
  }
  if (isPostgresUrl(databaseUrl)) {
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      const userId = (await client.query(q.user)).rows[0].userId as string
      const n = Number((await client.query(q.count)).rows[0].n)
      const listAfter = (await client.query(q.at + Math.floor(n * 0.9))).rows[0]
      const busiest = (await client.query(q.busiest)).rows[0]
      return {
        userId,
        listAfter,
        historyStatusId: busiest.id,
        historyBefore: Math.ceil(Number(busiest.n) / 2),
      }
    } finally {
      await client.end()
    }
  }
  const db = new SQLite(sqlitePath(databaseUrl) as string, { readonly: true })
  try {
    const userId = (db.prepare(q.user).get() as { userId: string }).userId
    const n = (db.prepare(q.count).get() as { n: number }).n
    const listAfter = db.prepare(q.at + Math.floor(n * 0.9)).get() as {
      id: string
      createdAt: string
    }
    const busiest = db.prepare(q.busiest).get() as { id: string; n: number }
    return {
      userId,
      listAfter,
      historyStatusId: busiest.id,
      historyBefore: Math.ceil(busiest.n / 2),
    }
  } finally {
    db.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      'database-url': { type: 'string' },
      analyze: { type: 'boolean', default: false },
    },
  })
  const url = values['database-url']
  if (!url) throw new Error('--database-url is required')
  process.stdout.write(
    `${plansToMarkdown(await explainHotPaths(url, await samplePositions(url), { analyze: values.analyze }))}\n`,
  )
}
