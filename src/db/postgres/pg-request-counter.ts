import type pg from 'pg'
import type { RequestCounter } from '../engine.ts'

// One statement, one round trip, prepared once per connection (named): the row of the key is
// created with a count of 1, counted up while its window runs, or started over once it ended.
// The window's time is the server's (`now()`), so instances whose clocks differ agree on it.
// note: in SET and CASE, `r.` is the row as it was; RETURNING sees it as it is now.
const HIT = {
  name: 'statusd_rate_limit_hit',
  text: `insert into rate_limit_counters as r (key, window_ends, count)
    values ($1, now() + $2 * interval '1 millisecond', 1)
    on conflict (key) do update set
      count = case when r.window_ends <= now() then 1 else r.count + 1 end,
      window_ends = case when r.window_ends <= now() then excluded.window_ends else r.window_ends end
    returning count, ceil(greatest(extract(epoch from window_ends - now()), 0) * 1000)::int8 as ttl_ms`,
}

/** Request counts in the database, shared by every instance on it (rate_limit_counters). */
export function pgRequestCounter(pool: pg.Pool): RequestCounter {
  return {
    async hit(key, windowMs) {
      const { rows } = await pool.query<{ count: number; ttl_ms: number }>({
        ...HIT,
        values: [key, windowMs],
      })
      const row = rows[0]
      if (!row) throw new Error('rate_limit_counters: the upsert returned no row')
      return { count: Number(row.count), ttlMs: Number(row.ttl_ms) }
    },
  }
}
