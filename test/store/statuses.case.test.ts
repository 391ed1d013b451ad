import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { StatusRow } from '../../src/db/database.ts'
import {
  countOwnedStatuses,
  deleteStatusRow,
  findStatusById,
  findStatusByKey,
  insertHistory,
  insertStatusUnlessKeyTaken,
  listOwnedStatuses,
  writeStatusRows,
} from '../../src/modules/statuses/statuses.repository.ts'
import { insertUser } from '../../src/modules/users/users.repository.ts'
import { onEngine, useStore } from '../helpers/store.ts'
import { statusRow, userRow } from './fixtures.ts'

describe(onEngine('statuses store'), () => {
  const store = useStore()
  const owner = async () => (await insertUser(store().db, userRow())).id

  it('a status reads back exactly as written, integers as numbers', async () => {
    const row = statusRow(await owner(), {
      status_key: 'room-4',
      name: 'Zoë’s room 🟢',
      value: '80%',
      description: 'Line one\nLine two\ttabbed — “quoted” 𝄞',
      color_no: 12,
      change_count: 7,
    })
    const inserted = await insertStatusUnlessKeyTaken(store().db, row)
    assert.deepEqual(inserted, row)
    assert.equal(typeof inserted?.color_no, 'number')
    assert.equal(typeof inserted?.change_count, 'number')
    assert.deepEqual(await findStatusById(store().db, row.id), row)
    assert.deepEqual(await findStatusByKey(store().db, row.owner_id, 'room-4'), row)
  })

  it('keys are per owner and case-sensitive', async () => {
    const [a, b] = [await owner(), await owner()]
    const lower = await insertStatusUnlessKeyTaken(store().db, statusRow(a, { status_key: 'k' }))
    const upper = await insertStatusUnlessKeyTaken(store().db, statusRow(a, { status_key: 'K' }))
    const other = await insertStatusUnlessKeyTaken(store().db, statusRow(b, { status_key: 'k' }))
    assert.ok(lower && upper && other)
    assert.equal((await findStatusByKey(store().db, a, 'K'))?.id, upper.id)
    assert.equal((await findStatusByKey(store().db, b, 'k'))?.id, other.id)
  })

  it('inserting a taken key or share id inserts nothing and answers undefined', async () => {
    const id = await owner()
    const first = statusRow(id, { status_key: 'dup' })
    await insertStatusUnlessKeyTaken(store().db, first)
    assert.equal(
      await insertStatusUnlessKeyTaken(store().db, statusRow(id, { status_key: 'dup' })),
      undefined,
    )
    assert.equal(
      await insertStatusUnlessKeyTaken(store().db, statusRow(id, { share_id: first.share_id })),
      undefined,
    )
    assert.equal(await countOwnedStatuses(store().db, id), 1)
  })

  it('statuses without a key never clash with each other', async () => {
    const id = await owner()
    for (let i = 0; i < 3; i++)
      assert.ok(await insertStatusUnlessKeyTaken(store().db, statusRow(id, { status_key: null })))
    assert.equal(await countOwnedStatuses(store().db, id), 3)
  })

  it('a batch of writes stores the rows the service computed, to the type, one row each', async () => {
    const inserted = await insertStatusUnlessKeyTaken(store().db, statusRow(await owner()))
    assert.ok(inserted)
    let current = inserted
    const changes = [
      {
        value: 'ON',
        value_updated_at: '2026-11-25T10:00:00.000Z',
        updated_at: '2026-11-25T10:00:00.000Z',
      },
      {
        name: 'Renamed',
        color_no: 7,
        access_type: 'public',
        updated_at: '2026-11-25T10:00:01.000Z',
      },
      {
        value: null,
        description: 'd',
        access_type_history: 'public',
        updated_at: '2026-11-25T10:00:02.000Z',
      },
    ]
    for (const change of changes) {
      const next: StatusRow = {
        ...current,
        ...change,
        version: Number(current.version) + 1,
        change_count: Number(current.change_count) + ('value' in change ? 1 : 0),
      }
      await writeStatusRows(store().db, [next], Object.keys(next) as (keyof StatusRow)[])
      assert.deepEqual(await findStatusById(store().db, inserted.id), next)
      current = next
    }
    assert.equal(current.version, Number(inserted.version) + changes.length)
    assert.equal(current.change_count, Number(inserted.change_count) + 2)

    // two statuses in one statement, each to its own row
    const second = await insertStatusUnlessKeyTaken(store().db, statusRow(await owner()))
    assert.ok(second)
    const both = [
      { ...current, value: 'A', version: Number(current.version) + 1 },
      { ...second, value: 'B', version: Number(second.version) + 1 },
    ]
    await writeStatusRows(store().db, both, ['value', 'version'])
    for (const row of both) assert.deepEqual(await findStatusById(store().db, row.id), row)
  })

  it('history rows are unique per status and change number', async () => {
    const row = statusRow(await owner())
    await insertStatusUnlessKeyTaken(store().db, row)
    const entry = {
      status_id: row.id,
      change_no: 1,
      value: 'ON',
      at: row.created_at,
      by_user_id: row.owner_id,
    }
    await insertHistory(store().db, entry)
    await assert.rejects(insertHistory(store().db, entry))
  })

  it('deleting a status leaves its history to the sweep; an unknown id deletes nothing', async () => {
    const row = statusRow(await owner())
    await insertStatusUnlessKeyTaken(store().db, row)
    await insertHistory(store().db, {
      status_id: row.id,
      change_no: 1,
      value: 'ON',
      at: row.created_at,
      by_user_id: row.owner_id,
    })
    const at = new Date().toISOString()
    assert.equal(await deleteStatusRow(store().db, row.id, at), true)
    assert.equal(await findStatusById(store().db, row.id), undefined)
    // its history is the sweep's (history-sweep.case.test.ts): recorded for it, not deleted here
    const pending = await store()
      .db.selectFrom('status_deletions')
      .selectAll()
      .where('status_id', '=', row.id)
      .execute()
    assert.deepEqual(pending, [{ status_id: row.id, deleted_at: at }])
    assert.equal(await deleteStatusRow(store().db, row.id, at), false)
  })

  it('lists owned statuses in creation order and pages by (created_at, id) without gaps', async () => {
    const id = await owner()
    const at = (s: number) => `2030-01-01T00:00:0${s}.000Z`
    // ties on created_at, and ids whose order differs between byte and dictionary order
    const specs: [string, number][] = [
      ['b', 1],
      ['A', 1],
      ['a_2', 2],
      ['a-1', 2],
      ['Z', 2],
      ['c', 3],
    ]
    for (const [sid, s] of specs)
      await insertStatusUnlessKeyTaken(store().db, statusRow(id, { id: sid, created_at: at(s) }))
    const all = (await listOwnedStatuses(store().db, id, {})).map((r) => r.id)
    assert.equal(all.length, specs.length)
    assert.deepEqual(
      [...new Set(all.map((sid) => specs.find(([x]) => x === sid)?.[1]))],
      [1, 2, 3],
      'creation order first',
    )
    const paged: string[] = []
    let after: { createdAt: string; id: string } | undefined
    for (;;) {
      const page = await listOwnedStatuses(store().db, id, { limit: 2, after })
      paged.push(...page.map((r) => r.id))
      const last = page[page.length - 1]
      if (page.length < 2 || !last) break
      after = { createdAt: last.created_at, id: last.id }
    }
    assert.deepEqual(paged, all, 'keyset paging gives every row once, in the same order')
  })

  it('counts owned statuses as a number', async () => {
    const id = await owner()
    assert.equal(await countOwnedStatuses(store().db, id), 0)
    await insertStatusUnlessKeyTaken(store().db, statusRow(id))
    const n = await countOwnedStatuses(store().db, id)
    assert.equal(n, 1)
    assert.equal(typeof n, 'number')
  })
})
