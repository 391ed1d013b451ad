// Timed changes bench: how late values that end are written when many end in the same
// second, and what that costs the writes beside them (docs/performance.md#values-that-end).
// Prints the figures and writes the run to bench/results/.
//   node bench/timed.ts [--statuses 10000] [--writers 8] [--duration 5] [--database-url URL] [--no-write]
//
// Method. A dataset of `--statuses` statuses (bench/seed.ts; SQLite, or PostgreSQL with
// `--database-url`) and `--writers` more; statusd runs as its own process (`statusd serve`).
// `--writers` loops PATCH a value of a status of their own (not one that ends), one request
// at a time each, for `--duration` seconds: the writes alone. Then every one of the
// `--statuses` statuses is given the same end, `valueUntil` a few seconds ahead (written in
// the database in one statement, as the API would store it), and the writers run again for
// as long, from just before that second. Lateness is each history entry the end wrote
// (`via = 'schedule'`) minus the end's time; the writers' req/s and latencies are those of
// each window.
import { runBurst } from './timed-burst.ts'

await runBurst({
  name: 'timed',
  changes: 'ends',
  method: ({ engine, statuses, writers, leadMs }) =>
    `statusd serve (${engine}); ${statuses} statuses given the same end (valueUntil) in one statement; lateness is each written history entry (via schedule) minus that time. ${writers} loops PATCH statuses of their own, one request at a time each, for durationS without ends, then for as long from ${leadMs} ms before the ends fall due`,
  // every end at the same moment, leadMs after the writers' second window opens
  async makeDue(db, ids, userId, leadMs) {
    const dueMs = Date.now() + 2_000 + leadMs
    const due = new Date(dueMs).toISOString()
    for (let i = 0; i < ids.length; i += 1000)
      await db
        .updateTable('statuses')
        .set({ value_until: due, value_after: 'OFF', value_until_by: userId })
        .where('id', 'in', ids.slice(i, i + 1000))
        .execute()
    return dueMs
  },
  // the ends not written by the window's end are waited for, a minute at most
  lateWaitMs: 60_000,
})
