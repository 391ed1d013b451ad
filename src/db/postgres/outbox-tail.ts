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

// A position holds only on the server it was taken on. A standby promoted after a failover
// hands out transaction ids again from where its copy of the log ended: ids the old primary
// gave to transactions whose log never reached it (rolled back, or still open when it died)
// come again, below a horizon read there. So do the ids of a server restarted after a crash
// (those whose log was not written). Reading on from the old position would skip what
// commits here below it. So a position names its server, and a read on another one starts
// afresh (`restarted`: the relay then has every stream read its status again).
// note: the server is the time its postmaster started. It differs between the old primary
// and the promoted standby, and changes with every restart. The system identifier does not
// tell them apart (a standby is a copy of its primary: the same), nor does the timeline tell
// a restart. A crash of one backend restarts the others without a new postmaster: the LISTEN
// connection is lost then, and the relay takes a new position after it is back
// (LiveRelay.restart). And a position above this server's xmax cannot have been taken here,
// whatever the server says.
const serverSql = sql<string>`extract(epoch from pg_postmaster_start_time())::text`

/** A position: the horizon (an xid8), then the server it was taken on (`<xid>@<server>`). */
export const outboxPosition = (xid: string, server: string): string => `${xid}@${server}`

/** The horizon and the server of a position; a text that is not one reads as nowhere. */
export function parseOutboxPosition(position: string): { xid: string; server: string } {
  const at = position.indexOf('@')
  const xid = position.slice(0, at)
  return at > 0 && /^\d{1,20}$/.test(xid)
    ? { xid, server: position.slice(at + 1) }
    : { xid: '0', server: '' }
}

/** The outbox tail of a PostgreSQL database. */
export function postgresOutboxTail(db: Kysely<DB>): OutboxTail {
  return {
    async start() {
      const { rows } = await sql<{ x: string; server: string }>`
        select ${horizonSql}::text as x, ${serverSql} as server`.execute(db)
      const row = rows[0] as { x: string; server: string }
      return outboxPosition(row.x, row.server)
    },

    async read(from, types, limit, statusIds): Promise<OutboxTailPage> {
      // note: one statement, so the horizon and the rows come from one snapshot: a row the
      // snapshot does not see is at or above the horizon, and the next read looks again.
      // limit + 1 tells "more than limit". A position from elsewhere reads no row at all
      // (`here` is a one-time filter of the scan).
      const position = parseOutboxPosition(from)
      const { rows } = await sql<{
        next: string
        server: string
        here: boolean
        status_id: string | null
        types: string[] | null
        version: number | null
      }>`
        with h as materialized (
          select ${horizonSql} as x, ${serverSql} as server,
            (${serverSql} = ${position.server}
              and ${position.xid}::xid8 <= ${xmaxSql}) as here
        ),
        changed as (
          select o.status_id, array_agg(distinct o.type) as types
          from outbox_events o
          where (select here from h)
            and o.tx_id >= ${position.xid}::xid8 and o.tx_id < ${xmaxSql}
            and o.type = any(${[...types]}::text[]) and o.status_id is not null
            ${statusIds === undefined ? sql`` : sql`and o.status_id = any(${[...statusIds]}::text[])`}
          group by o.status_id
          limit ${limit + 1}
        )
        select h.x::text as next, h.server, h.here, c.status_id, c.types, s.version
        from h
        left join changed c on true
        left join statuses s on s.id = c.status_id`.execute(db)
      const first = rows[0] as { next: string; server: string; here: boolean }
      const next = outboxPosition(first.next, first.server)
      if (!first.here) return { next, complete: false, restarted: true, changed: [] }
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
        restarted: false,
        changed: changed.slice(0, limit),
      }
    },
  }
}
