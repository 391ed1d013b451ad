import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pruneHistory } from '../../src/modules/statuses/history.repository.ts'
import {
  insertHistory,
  insertStatusUnlessKeyTaken,
} from '../../src/modules/statuses/statuses.repository.ts'
import { insertUser } from '../../src/modules/users/users.repository.ts'
import { onEngine, useStore } from '../helpers/store.ts'
import { statusRow, userRow } from './fixtures.ts'

const DAY_MS = 24 * 60 * 60 * 1000
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString()

describe(onEngine('history store'), () => {
  const store = useStore()

  /** A status whose entries 1, 2, … were written the given numbers of days ago. */
  async function statusWithHistory(ages: number[]): Promise<string> {
    const db = store().db
    const owner = await insertUser(db, userRow())
    const status = statusRow(owner.id, { change_count: ages.length })
    await insertStatusUnlessKeyTaken(db, status)
    for (const [i, age] of ages.entries())
      await insertHistory(db, {
        status_id: status.id,
        change_no: i + 1,
        value: `v${i + 1}`,
        at: daysAgo(age),
        by_user_id: owner.id,
      })
    return status.id
  }

  const stored = async (statusId: string) =>
    (
      await store()
        .db.selectFrom('status_history')
        .select('change_no')
        .where('status_id', '=', statusId)
        .orderBy('change_no')
        .execute()
    ).map((r) => r.change_no)

  it('pruning deletes the expired entries before the oldest one within retention', async () => {
    const id = await statusWithHistory([40, 30, 8, 5, 1, 0])
    await pruneHistory(store().db, id, daysAgo(7), 6)
    assert.deepEqual(await stored(id), [4, 5, 6])
  })

  it('pruning keeps the entry that set the current value, however old', async () => {
    const id = await statusWithHistory([40, 30, 20])
    await pruneHistory(store().db, id, daysAgo(7), 3)
    assert.deepEqual(await stored(id), [3])
  })

  it('pruning with nothing expired deletes nothing', async () => {
    const id = await statusWithHistory([3, 2, 1])
    await pruneHistory(store().db, id, daysAgo(7), 3)
    assert.deepEqual(await stored(id), [1, 2, 3])
  })

  it('pruning stops at the first entry within retention: an older entry after it waits', async () => {
    // note: entries are written in time order; this one is out of order (a clock went back)
    // and stays until the entries before it expire; reads filter it out meanwhile
    const id = await statusWithHistory([40, 2, 30, 1])
    await pruneHistory(store().db, id, daysAgo(7), 4)
    assert.deepEqual(await stored(id), [2, 3, 4])
  })
})
