// Schedules bench: how late schedule fires are written when many statuses' schedules fire in
// the same second, and what that costs the writes beside them (bench/timed.ts, for
// schedules: docs/api.md#schedules). Prints the figures and writes the run to bench/results/.
//   node bench/schedules.ts [--statuses 10000] [--writers 8] [--duration 5] [--database-url URL] [--no-write]
//
// Method. A dataset of `--statuses` statuses (bench/seed.ts; SQLite, or PostgreSQL with
// `--database-url`) and `--writers` more; statusd runs as its own process (`statusd serve`).
// `--writers` loops PATCH a value of a status of their own (not one that is scheduled), one request
// at a time each, for `--duration` seconds: the writes alone. Then every one of the
// `--statuses` statuses is given the same schedule, one entry firing at the first whole
// minute a few seconds ahead (written in the database, as the API would store it), and the
// writers run again for as long, from just before that minute. Lateness is each history
// entry a fire wrote (`via = 'schedule'`) minus the fire's time; the writers' req/s and
// latencies are those of each window.
import { runBurst } from './timed-burst.ts'

await runBurst({
  name: 'schedules',
  changes: 'fires',
  method: ({ engine, statuses, writers, leadMs }) =>
    `statusd serve (${engine}); ${statuses} statuses given the same schedule, firing at one minute; lateness is each written history entry (via schedule) minus that time. ${writers} loops PATCH statuses of their own, one request at a time each, for durationS without fires, then for as long from ${leadMs} ms before the fires fall due`,
  // every fire at the same minute, the first whole one a few seconds ahead
  async makeDue(db, ids, userId) {
    const dueMs = Math.ceil((Date.now() + 5_000) / 60_000) * 60_000
    const due = new Date(dueMs)
    const now = new Date().toISOString()
    const entries = JSON.stringify([
      {
        cron: `${due.getUTCMinutes()} ${due.getUTCHours()} ${due.getUTCDate()} ${due.getUTCMonth() + 1} *`,
        value: 'OFF',
      },
    ])
    for (let i = 0; i < ids.length; i += 1000)
      await db
        .insertInto('status_schedules')
        .values(
          ids.slice(i, i + 1000).map((id) => ({
            status_id: id,
            set_by: userId,
            timezone: 'UTC',
            entries,
            next_fire_at: due.toISOString(),
            created_at: now,
            updated_at: now,
          })),
        )
        .execute()
    return dueMs
  },
  // only the fires written within the second window count
  lateWaitMs: 0,
})
