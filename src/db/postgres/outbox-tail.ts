import { type Kysely, sql } from 'kysely'
import type { DB } from '../database.ts'
import type { OutboxTail, OutboxTailPage } from '../engine.ts'

// Commit order on PostgreSQL (docs/postgres.md#live-updates-across-instances). Every outbox
// row carries the id of the transaction that recorded it (`tx_id`, an xid8: 64 bits, never
// wraps). Transaction ids are handed out when transactions start writing, not when they
// commit, so a row with a lower id can become visible after one with a higher id: reading
// "ids above the last one seen" would skip it for good. What is certain is the horizon of a
// snapshot, `pg_snapshot_xmin(pg_current_snapshot())`: every transaction with a lower id has
// ended (committed, and so visible, or rolled back); one at or above it may still commit.
// So a read takes every visible row from the previous read's horizon on, and the next read
// starts at this read's horizon: a row below it is final and never read again; a row at or
// above it is read again by the next reads until the horizon passes it. Nothing is skipped,
// however transactions interleave, and a long transaction (anywhere on the cluster: it holds
// the horizon back) delays nothing; it only makes reads return the rows after it again, which
// cost the reader a comparison each (a status at a version it has).

const horizonSql = sql<string>`pg_snapshot_xmin(pg_current_snapshot())`
// note: no transaction of this cluster has an id at or above the snapshot's xmax yet; a row
// that says so came from another cluster (`statusd copy` between two PostgreSQL databases
// keeps the column) and is not news, so it is not read again at every look
const xmaxSql = sql<string>`pg_snapshot_xmax(pg_current_snapshot())`

/** The outbox tail of a PostgreSQL database. */
export function postgresOutboxTail(db: Kysely<DB>): OutboxTail {
  return {
    async start() {
      const { rows } = await sql<{ next: string }>`select ${horizonSql}::text as next`.execute(db)
      return (rows[0] as { next: string }).next
    },

    async read(from, types, limit): Promise<OutboxTailPage> {
      // note: one statement, so the horizon and the rows come from one snapshot: a row the
      // snapshot does not see is at or above the horizon, and the next read looks again.
      // limit + 1 tells "more than limit".
      const { rows } = await sql<{
        next: string
        status_id: string | null
        types: string[] | null
        version: number | null
      }>`
        with h as materialized (select ${horizonSql} as x),
        changed as (
          select o.status_id, array_agg(distinct o.type) as types
          from outbox_events o
          where o.tx_id >= ${from}::xid8 and o.tx_id < ${xmaxSql}
            and o.type = any(${[...types]}::text[]) and o.status_id is not null
          group by o.status_id
          limit ${limit + 1}
        )
        select h.x::text as next, c.status_id, c.types, s.version
        from h
        left join changed c on true
        left join statuses s on s.id = c.status_id`.execute(db)
      const next = (rows[0] as { next: string }).next
      const changed = rows
        .filter((row) => row.status_id !== null)
        .map((row) => ({
          statusId: row.status_id as string,
          version: row.version,
          types: row.types ?? [],
        }))
      return {
        next,
        complete: changed.length <= limit,
        changed: changed.slice(0, limit),
      }
    },
  }
}
