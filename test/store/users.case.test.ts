import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  countUsers,
  findUserByEmail,
  findUserById,
  insertUser,
  listUsers,
  updateUser,
} from '../../src/modules/users/users.repository.ts'
import { onEngine, useStore } from '../helpers/store.ts'
import { userRow } from './fixtures.ts'

describe(onEngine('users store'), () => {
  const store = useStore()

  it('a user reads back exactly as written, integers as numbers', async () => {
    const row = userRow({
      name: 'Zoë 🟢',
      email: 'Zoe@Example.com',
      email_key: 'zoe@example.com',
      verified: 0,
      password_hash: '$scrypt$ln=14,r=8,p=5$c2FsdA$aGFzaA',
      email_verified_at: null,
    })
    assert.deepEqual(await insertUser(store().db, row), row)
    assert.deepEqual(await findUserById(store().db, row.id), row)
    // found by its folded address, in any case
    assert.deepEqual(await findUserByEmail(store().db, 'zoe@example.com'), row)
    assert.deepEqual(await findUserByEmail(store().db, 'ZOE@example.COM'), row)
  })

  it('an unknown id or e-mail finds nothing', async () => {
    assert.equal(await findUserById(store().db, 'nope'), undefined)
    assert.equal(await findUserByEmail(store().db, 'nobody@example.com'), undefined)
  })

  it('e-mail addresses are unique, but any number of users may have none', async () => {
    await insertUser(store().db, userRow({ email: 'twice@example.com' }))
    await assert.rejects(insertUser(store().db, userRow({ email: 'twice@example.com' })))
    // and so are their folded forms
    await insertUser(
      store().db,
      userRow({ email: 'Once@example.com', email_key: 'once@example.com' }),
    )
    await assert.rejects(
      insertUser(store().db, userRow({ email: 'once@example.com', email_key: 'once@example.com' })),
    )
    await insertUser(store().db, userRow({ email: null }))
    await insertUser(store().db, userRow({ email: null }))
  })

  it('updates change only what is given and return the row', async () => {
    const row = await insertUser(store().db, userRow())
    const updated = await updateUser(store().db, row.id, { plan: 'pro', verified: 0 })
    assert.deepEqual(updated, { ...row, plan: 'pro', verified: 0 })
    assert.equal(await updateUser(store().db, 'nope', { plan: 'pro' }), undefined)
  })

  it('counts and lists users in creation order, as numbers', async () => {
    const before = await countUsers(store().db)
    assert.equal(typeof before, 'number')
    const at = '2020-01-01T00:00:00.000Z'
    const ids = ['b-user', 'a-user', 'c-user']
    for (const id of ids) await insertUser(store().db, userRow({ id, created_at: at }))
    assert.equal(await countUsers(store().db), before + 3)
    const listed = (await listUsers(store().db)).filter((u) => u.created_at === at).map((u) => u.id)
    assert.deepEqual(listed, ['a-user', 'b-user', 'c-user'], 'ties on created_at go by id')
  })
})
