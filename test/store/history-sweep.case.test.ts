import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DEFAULT_PLANS } from '../../src/modules/plans/plans.ts'
import { pruneHistory } from '../../src/modules/statuses/history.repository.ts'
import { sweepBatch, sweepDeletedHistory } from '../../src/modules/statuses/history-sweep.ts'
import {
  findStatusById,
  insertHistory,
  insertStatusUnlessKeyTaken,
} from '../../src/modules/statuses/statuses.repository.ts'
import { deleteStatusById } from '../../src/modules/statuses/statuses.service.ts'
import { insertUser } from '../../src/modules/users/users.repository.ts'
import { onEngine, useStore } from '../helpers/store.ts'
import { statusRow, userRow } from './fixtures.ts'

// Finding 3 of the hardening review (docs/security.md): bulk history work blocked the event
// loop. A deleted status goes at once; its history goes after, in batches, and a prune after
// a plan downgrade deletes one batch per write (docs/api.md#delete-a-status). The batch size
// is made small here, so "more than one batch" is a few dozen rows.

const DAY_MS = 24 * 60 * 60 * 1000
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString()

describe(onEngine('bulk history work in bounded batches (finding 3)'), () => {
  const store = useStore()

  /** A status of a new owner with `entries` history entries, the first `expired` 30 days old. */
  async function statusWithHistory(entries: number, expired = 0) {
    const db = store().db
    const owner = await insertUser(db, userRow())
    const status = statusRow(owner.id, { change_count: entries })
    await insertStatusUnlessKeyTaken(db, status)
    for (let n = 1; n <= entries; n++)
      await insertHistory(db, {
        status_id: status.id,
        change_no: n,
        value: `v${n}`,
        at: daysAgo(n <= expired ? 30 : 0),
        by_user_id: owner.id,
      })
    return { id: status.id, caller: { userId: owner.id, plan: owner.plan } }
  }

  const historyCount = async (statusId: string) =>
    (
      await store()
        .db.selectFrom('status_history')
        .select('change_no')
        .where('status_id', '=', statusId)
        .execute()
    ).length

  const pending = async (statusId: string) =>
    (
      await store()
        .db.selectFrom('status_deletions')
        .select('status_id')
        .where('status_id', '=', statusId)
        .execute()
    ).length

  const deps = () => ({ db: store().db, plans: DEFAULT_PLANS })

  it('bulk history work: a deleted status is gone for readers at once, its history stays for the sweep', async () => {
    const { id, caller } = await statusWithHistory(23)
    await deleteStatusById(deps(), caller, id)
    assert.equal(await findStatusById(store().db, id), undefined, 'gone for readers at once')
    // the delete's transaction deleted no history: its cost does not grow with the history
    assert.equal(await historyCount(id), 23)
    assert.equal(await pending(id), 1, 'recorded for the sweep')
  })

  it("bulk history work: the sweep deletes a deleted status's history, at most one batch per transaction", async () => {
    const { id, caller } = await statusWithHistory(23)
    await deleteStatusById(deps(), caller, id)
    const batches: number[] = []
    for (;;) {
      const { deleted, done } = await sweepBatch({ db: store().db }, id, 5)
      batches.push(deleted)
      if (done) break
    }
    assert.deepEqual(batches, [5, 5, 5, 5, 3])
    assert.equal(await historyCount(id), 0)
    assert.equal(await pending(id), 0, 'the deletion is done')
  })

  it('bulk history work: a sweep interrupted between batches finishes on the next run', async () => {
    const { id, caller } = await statusWithHistory(12)
    await deleteStatusById(deps(), caller, id)
    // a sweep that stopped (a crash, a shutdown) after one batch
    assert.deepEqual(await sweepBatch({ db: store().db }, id, 5), { deleted: 5, done: false })
    assert.equal(await historyCount(id), 7)
    assert.equal(await pending(id), 1, 'what is left is still recorded')
    // the next run (the sweep at start, or on its timer)
    await sweepDeletedHistory({ db: store().db }, { batchSize: 5 })
    assert.equal(await historyCount(id), 0)
    assert.equal(await pending(id), 0)
  })

  it('bulk history work: sweeps running at once (two instances) delete everything once', async () => {
    const a = await statusWithHistory(17)
    const b = await statusWithHistory(9)
    await deleteStatusById(deps(), a.caller, a.id)
    await deleteStatusById(deps(), b.caller, b.id)
    const totals = await Promise.all([
      sweepDeletedHistory({ db: store().db }, { batchSize: 4 }),
      sweepDeletedHistory({ db: store().db }, { batchSize: 4 }),
    ])
    assert.equal(await historyCount(a.id), 0)
    assert.equal(await historyCount(b.id), 0)
    assert.equal(await pending(a.id), 0)
    assert.equal(await pending(b.id), 0)
    // every row was deleted by exactly one of them (this suite's store may hold other
    // deletions left by the cases above, swept here too)
    assert.ok(totals[0] + totals[1] >= 26)
  })

  it('bulk history work: a prune after a plan downgrade deletes at most one batch per write', async () => {
    const { id } = await statusWithHistory(15, 12)
    const cutoff = daysAgo(7)
    assert.equal(await pruneHistory(store().db, id, cutoff, 15, 5), 5)
    assert.equal(await historyCount(id), 10)
    assert.equal(await pruneHistory(store().db, id, cutoff, 15, 5), 5)
    assert.equal(await pruneHistory(store().db, id, cutoff, 15, 5), 2, 'then the rest')
    assert.equal(await pruneHistory(store().db, id, cutoff, 15, 5), 0)
    assert.equal(await historyCount(id), 3, 'the entries within retention stay')
  })
})
