// The cost of GET /v1/status/:id/history/durations (docs/api.md#time-in-each-value) on a
// status with a long history: `--rows` entries, one a second up to now, alternating between
// three values; each range (today, 7 days, 30 days) timed through the service, the median of
// `--rounds` runs, with the entries it read and the event loop's longest stall meanwhile.
//   node bench/durations.ts --rows 1000000 [--database-url postgres://…] [--no-write]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { createDatabase } from '../src/db/create-database.ts'
import type { StatusRow } from '../src/db/database.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { newId, newShareId } from '../src/lib/ids.ts'
import { DEFAULT_PLANS } from '../src/modules/plans/plans.ts'
import { DURATIONS_BATCH, statusDurations } from '../src/modules/statuses/history-durations.ts'
import { type DurationsResult, runInfo, writeResult } from './results.ts'

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '5' },
    'database-url': { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
})
const total = Number(values.rows)
const rounds = Number(values.rounds)
const dir = values['database-url'] ? null : mkdtempSync(join(tmpdir(), 'statusd-durations-'))
const database = createDatabase(values['database-url'] ?? `sqlite:${join(dir as string, 'b.db')}`)
const engine = values['database-url'] ? 'postgres' : 'sqlite'
const DAY_MS = 24 * 60 * 60 * 1000
const VALUES = ['OPEN', 'SHUT', 'AJAR']

try {
  await migrateToLatest(database.db)
  const { db } = database
  const now = Date.now()
  const ownerId = newId()
  const created = new Date(now - total * 1000).toISOString()
  await db
    .insertInto('users')
    .values({ id: ownerId, name: 'owner', plan: 'pro', verified: 1, created_at: created })
    .execute()
  const statusId = newId()
  await db
    .insertInto('statuses')
    .values({
      id: statusId,
      share_id: newShareId(),
      owner_id: ownerId,
      status_key: 'busy',
      name: 'Busy',
      type: 'text',
      value: VALUES[(total - 1) % VALUES.length] as string,
      access_type: 'private',
      description: '',
      color_no: 1,
      access_type_user_list: 'owner',
      access_type_history: 'private',
      change_count: total,
      created_at: created,
      updated_at: created,
      value_updated_at: created,
      version: 1,
      listed: 0,
    })
    .execute()
  const seedStart = performance.now()
  for (let i = 0; i < total; i += 5_000)
    await db
      .insertInto('status_history')
      .values(
        Array.from({ length: Math.min(5_000, total - i) }, (_, j) => ({
          status_id: statusId,
          change_no: i + j + 1,
          value: VALUES[(i + j) % VALUES.length] as string,
          at: new Date(now - (total - i - j) * 1000).toISOString(),
          by_user_id: ownerId,
        })),
      )
      .execute()
  console.error(
    `seeded ${total} entries in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
  )

  const status = (await db
    .selectFrom('statuses')
    .selectAll()
    .where('id', '=', statusId)
    .executeTakeFirstOrThrow()) as StatusRow
  const deps = { db, plans: DEFAULT_PLANS, clock: { now: () => now } }
  const rows: DurationsResult['rows'] = []
  for (const [range, days] of [
    ['today', 1],
    ['7 days', 7],
    ['30 days', 30],
  ] as const) {
    const from = new Date(now - days * DAY_MS).toISOString()
    // the entries the walk reads: those since `from`, and the one in force at it
    const since = Math.min(total, Math.floor((days * DAY_MS) / 1000))
    const entriesRead = since < total ? since + 1 : total
    const ms: number[] = []
    let stallMs = 0
    let valueCount = 0
    for (let r = 0; r < rounds; r++) {
      const loop = monitorEventLoopDelay({ resolution: 1 })
      loop.enable()
      const start = performance.now()
      const answer = await statusDurations(deps, { status, role: 'owner' }, { from })
      ms.push(performance.now() - start)
      loop.disable()
      stallMs = Math.max(stallMs, loop.max / 1e6)
      valueCount = answer.values.length
    }
    ms.sort((a, b) => a - b)
    const row = {
      range,
      entriesRead,
      values: valueCount,
      medianMs: Number((ms[Math.floor(ms.length / 2)] as number).toFixed(1)),
      longestStallMs: Number(stallMs.toFixed(1)),
    }
    console.log(row)
    rows.push(row)
  }
  const result: DurationsResult = {
    ...runInfo(
      process.cwd(),
      `npm run bench:durations -- --rows ${total}${values['database-url'] ? ' --database-url postgres://…' : ''}`,
      `one status with rows history entries, one a second up to now, three values in turn; statusDurations (the service behind GET /v1/status/:id/history/durations) for the last 1, 7 and 30 days, medianMs of rounds runs; entriesRead is the entries since from plus the one in force at it; longestStallMs the event loop's longest delay during the runs (the walk reads ${DURATIONS_BATCH} entries a statement, with requests between)`,
    ),
    kind: 'durations',
    params: { engine, rows: total, rounds, batch: DURATIONS_BATCH },
    rows,
  }
  if (!values['no-write']) writeResult(result)
} finally {
  await database.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
}
