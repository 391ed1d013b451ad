import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError } from '../../src/lib/errors.ts'
import type { Plans } from '../../src/modules/plans/plans.ts'
import type { ServiceDeps } from '../../src/modules/service-deps.ts'
import {
  type Caller,
  setStatusByKey,
  updateStatusById,
} from '../../src/modules/statuses/statuses.service.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { TEST_PLANS } from '../helpers/app.ts'
import { onEngine, useStore } from '../helpers/store.ts'

// One script of writes through the statuses service, and what it leaves in storage: every
// engine runs this same suite and is held to the same results (docs/architecture.md#where-rules-live:
// a write's rules live in the service, once, and each engine only stores the rows it is given).

const DAY_MS = 86_400_000
// the owner's plan keeps a day of history (docs/api.md#history)
const PLANS: Plans = {
  ...TEST_PLANS,
  day: {
    descriptionLinks: true,
    accessSettings: true,
    maxStatuses: null,
    requestsPerMinute: null,
    historyDays: 1,
  },
}

describe(onEngine('a script of status writes leaves the same rows on every engine'), () => {
  const store = useStore()

  it('value, partial update, palette colour, If-Match, history and its pruning, outbox rows', async () => {
    const { db } = store()
    const deps: ServiceDeps = { db, plans: PLANS, linkBase: () => 'https://status.example' }
    const user = await createUser(db, PLANS, { name: 'owner', plan: 'day', verified: true })
    const caller: Caller = { userId: user.id, plan: user.plan }

    // 1. created by key, with a value and a palette that gives it its colour
    const created = await setStatusByKey(deps, caller, 'parity', {
      value: 'UP',
      palette: [
        { value: 'UP', colorNo: 3 },
        { value: 'DOWN', colorNo: 9 },
      ],
    })
    assert.equal(created.created, true)
    const id = created.status.id
    // someone is notified of its changes from now on: value writes record status events
    const at = new Date().toISOString()
    await db
      .insertInto('notification_rules')
      .values({
        status_id: id,
        user_id: user.id,
        condition: '"any"',
        channel_ids: null,
        created_at: at,
        updated_at: at,
      })
      .execute()

    // 2. a value in the palette takes its colour
    const down = await updateStatusById(deps, caller, id, { value: 'DOWN' })
    // 3. a partial update changes what it names: no value, so no history row and no event
    const renamed = await updateStatusById(deps, caller, id, { name: 'Renamed' })
    // 4. If-Match with a tag the status no longer has is refused, and writes nothing
    await assert.rejects(
      updateStatusById(deps, caller, id, { value: 'UP' }, { ifMatch: down.etag }),
      (err) => err instanceof ApiError && err.statusCode === 412,
    )
    // 5. … with its current tag it writes; an explicit colour beats the palette's
    const up = await updateStatusById(
      deps,
      caller,
      id,
      { value: 'UP', colorNo: 7 },
      { ifMatch: renamed.etag },
    )
    // 6. by key, a value outside the palette keeps the colour it has
    const other = await setStatusByKey(deps, caller, 'parity', { value: 'MAYBE' })
    assert.equal(other.created, false)

    const summary = (s: typeof up.status) => ({
      value: s.value,
      name: s.name,
      colorNo: s.colorNo,
      changeCount: s.changeCount,
    })
    assert.deepEqual(
      [created, down, renamed, up, other].map((w) => summary(w.status)),
      [
        { value: 'UP', name: 'parity', colorNo: 3, changeCount: 1 },
        { value: 'DOWN', name: 'parity', colorNo: 9, changeCount: 2 },
        { value: 'DOWN', name: 'Renamed', colorNo: 9, changeCount: 2 },
        { value: 'UP', name: 'Renamed', colorNo: 7, changeCount: 3 },
        { value: 'MAYBE', name: 'Renamed', colorNo: 7, changeCount: 4 },
      ],
    )
    // every write moves the version (the ETag), the refused one none
    assert.deepEqual(
      [created, down, renamed, up, other].map((w) => w.etag),
      [1, 2, 3, 4, 5].map((version) => `"${id}.${version}"`),
    )

    const row = await db
      .selectFrom('statuses')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    assert.deepEqual(
      {
        value: row.value,
        name: row.name,
        name_search: row.name_search,
        color_no: row.color_no,
        version: Number(row.version),
        change_count: Number(row.change_count),
        palette: row.palette,
      },
      {
        value: 'MAYBE',
        name: 'Renamed',
        name_search: 'renamed',
        color_no: 7,
        version: 5,
        change_count: 4,
        palette: JSON.stringify([
          { value: 'UP', colorNo: 3 },
          { value: 'DOWN', colorNo: 9 },
        ]),
      },
    )
    assert.equal(row.updated_at, other.status.updatedAt)
    assert.equal(row.value_updated_at, other.status.valueUpdatedAt)

    const history = async () =>
      (
        await db
          .selectFrom('status_history')
          .select(['change_no', 'value', 'by_user_id'])
          .where('status_id', '=', id)
          .orderBy('change_no')
          .execute()
      ).map((h) => [Number(h.change_no), h.value, h.by_user_id === user.id])
    assert.deepEqual(await history(), [
      [1, 'UP', true],
      [2, 'DOWN', true],
      [3, 'UP', true],
      [4, 'MAYBE', true],
    ])

    const events = async () =>
      (
        await db
          .selectFrom('outbox_events')
          .select(['type', 'payload', 'done_at'])
          .where('status_id', '=', id)
          .execute()
      )
        .map((e) => ({ type: e.type, pending: e.done_at === null, ...JSON.parse(e.payload) }))
        .sort((x, y) => x.status.changeCount - y.status.changeCount)
        .map(({ status, at: _at, by, ...e }) => {
          // who made the change, for byOthers rules (docs/notifications.md#rules)
          assert.equal(by, caller.userId)
          return {
            ...e,
            value: status.value,
            previousValue: status.previousValue,
            colorNo: status.colorNo,
          }
        })
    // one status.changed event per value write after the rule came, none for the rename
    assert.deepEqual(await events(), [
      { type: 'status.changed', pending: true, value: 'DOWN', previousValue: 'UP', colorNo: 9 },
      { type: 'status.changed', pending: true, value: 'UP', previousValue: 'DOWN', colorNo: 7 },
      { type: 'status.changed', pending: true, value: 'MAYBE', previousValue: 'UP', colorNo: 7 },
    ])
    const payload = JSON.parse(
      (
        await db
          .selectFrom('outbox_events')
          .select('payload')
          .where('status_id', '=', id)
          .where('payload', 'like', '%"DOWN"%')
          .executeTakeFirstOrThrow()
      ).payload,
    )
    assert.deepEqual(payload.status, {
      id,
      shareId: created.status.shareId,
      name: 'parity',
      value: 'DOWN',
      previousValue: 'UP',
      colorNo: 9,
      changeCount: 2,
      url: `https://status.example/s/${created.status.shareId}`,
    })

    // 7. history past the owner's retention goes with the next value write, but for the
    // entry that set the current value when it is the only one left within retention
    const old = new Date(Date.now() - 2 * DAY_MS).toISOString()
    await db
      .updateTable('status_history')
      .set({ at: old })
      .where('status_id', '=', id)
      .where('change_no', '<=', 3)
      .execute()
    await updateStatusById(deps, caller, id, { value: 'DOWN' })
    assert.deepEqual(await history(), [
      [4, 'MAYBE', true],
      [5, 'DOWN', true],
    ])
    const final = await db
      .selectFrom('statuses')
      .select(['version', 'change_count', 'color_no'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    assert.deepEqual([Number(final.version), Number(final.change_count), final.color_no], [6, 5, 9])
    assert.equal((await events()).length, 4)
  })

  it('writes that arrive together: each checked on the row the one before left, one refused alone', async () => {
    const { db } = store()
    const deps: ServiceDeps = { db, plans: PLANS }
    const user = await createUser(db, PLANS, { name: 'owner', plan: 'day', verified: true })
    const caller: Caller = { userId: user.id, plan: user.plan }
    const a = await setStatusByKey(deps, caller, 'together-a', { value: 'A0' })
    const b = await setStatusByKey(deps, caller, 'together-b', { value: 'B0' })
    // in one turn of the event loop: they share a transaction where the engine batches
    const results = await Promise.allSettled([
      updateStatusById(deps, caller, a.status.id, { value: 'A1' }),
      setStatusByKey(deps, caller, 'together-b', { value: 'B1' }),
      // the tag A had before A1: refused, and nothing of it written
      updateStatusById(deps, caller, a.status.id, { value: 'stale' }, { ifMatch: a.etag }),
      updateStatusById(deps, caller, a.status.id, { name: 'Named' }),
      updateStatusById(deps, caller, a.status.id, { value: 'A2' }),
      updateStatusById(deps, caller, 'no-such-status', { value: 'X' }),
    ])
    assert.deepEqual(
      results.map((r) =>
        r.status === 'fulfilled'
          ? [r.value.status.value, r.value.status.name, r.value.status.changeCount, r.value.etag]
          : (r.reason as ApiError).statusCode,
      ),
      [
        ['A1', 'together-a', 2, `"${a.status.id}.2"`],
        ['B1', 'together-b', 2, `"${b.status.id}.2"`],
        412,
        ['A1', 'Named', 2, `"${a.status.id}.3"`],
        ['A2', 'Named', 3, `"${a.status.id}.4"`],
        404,
      ],
    )
    const history = await db
      .selectFrom('status_history')
      .select(['status_id', 'change_no', 'value'])
      .where('status_id', 'in', [a.status.id, b.status.id])
      .orderBy('status_id')
      .orderBy('change_no')
      .execute()
    const of = (id: string) =>
      history.filter((h) => h.status_id === id).map((h) => [Number(h.change_no), h.value])
    assert.deepEqual(of(a.status.id), [
      [1, 'A0'],
      [2, 'A1'],
      [3, 'A2'],
    ])
    assert.deepEqual(of(b.status.id), [
      [1, 'B0'],
      [2, 'B1'],
    ])
    const stored = await db
      .selectFrom('statuses')
      .select(['value', 'name', 'version', 'change_count'])
      .where('id', '=', a.status.id)
      .executeTakeFirstOrThrow()
    assert.deepEqual(
      [stored.value, stored.name, Number(stored.version), Number(stored.change_count)],
      ['A2', 'Named', 4, 3],
    )
  })
})
