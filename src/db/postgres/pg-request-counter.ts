import type pg from 'pg'
import type { RequestCounter } from '../engine.ts'

// One statement, one round trip: the row of the key is
// created with a count of $3, counted up by $3 while its window runs, or started over at $3
// once it ended. The window's time is the server's (`now()`), so instances whose clocks
// differ agree on it.
// note: in SET and CASE, `r.` is the row as it was; RETURNING sees it as it is now.
const HITS = `insert into rate_limit_counters as r (key, window_ends, count)
    values ($1, now() + $2 * interval '1 millisecond', $3)
    on conflict (key) do update set
      count = case when r.window_ends <= now() then excluded.count else r.count + excluded.count end,
      window_ends = case when r.window_ends <= now() then excluded.window_ends else r.window_ends end
    returning count, ceil(greatest(extract(epoch from window_ends - now()), 0) * 1000)::int8 as ttl_ms`

interface Hit {
  resolve(result: { count: number; ttlMs: number }): void
  reject(err: unknown): void
}

/**
 * Request counts in the database, shared by every instance on it (rate_limit_counters).
 *
 * The hits of one key that come while its statement is on its way are counted together, by
 * the next statement (`count + n`), as a group commit: a busy user costs one round trip per
 * database round trip rather than one per request (each round trip's socket write and read
 * cost more CPU than the rest of a PATCH's query, docs/postgres.md#scaling-out-behind-a-load-balancer).
 * Still exact: every hit is counted before its request goes on, and the n hits of a statement
 * get the n counts it added, `total - n + 1` to `total`, one each.
 */
export function pgRequestCounter(pool: Pick<pg.Pool, 'query'>): RequestCounter {
  // per key with a statement on its way: the hits that came since, for the next one
  const waiting = new Map<string, Hit[]>()

  const send = (key: string, windowMs: number, hits: Hit[]): void => {
    pool
      .query<{ count: number; ttl_ms: number }>({
        text: HITS,
        values: [key, windowMs, hits.length],
      })
      .then(({ rows }) => {
        const row = rows[0]
        if (!row) throw new Error('rate_limit_counters: the upsert returned no row')
        const total = Number(row.count)
        const ttlMs = Number(row.ttl_ms)
        for (const [i, hit] of hits.entries())
          hit.resolve({ count: total - hits.length + 1 + i, ttlMs })
      })
      .catch((err: unknown) => {
        for (const hit of hits) hit.reject(err)
      })
      .finally(() => {
        const next = waiting.get(key) ?? []
        if (next.length === 0) waiting.delete(key)
        else {
          waiting.set(key, [])
          // note: one key is one limit with one window (the plugin's timeWindow), so the
          // window of the hits that waited is this one's
          send(key, windowMs, next)
        }
      })
  }

  return {
    hit(key, windowMs) {
      return new Promise((resolve, reject) => {
        const hit = { resolve, reject }
        const queued = waiting.get(key)
        if (queued) queued.push(hit)
        else {
          waiting.set(key, [])
          send(key, windowMs, [hit])
        }
      })
    },
  }
}
