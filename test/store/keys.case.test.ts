import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  findActiveKeyByHash,
  findApiKeyById,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../src/modules/keys/keys.repository.ts'
import { insertUser } from '../../src/modules/users/users.repository.ts'
import { onEngine, useStore } from '../helpers/store.ts'
import { keyRow, userRow } from './fixtures.ts'

const NOW = '2030-06-01T12:00:00.000Z'

describe(onEngine('api keys store'), () => {
  const store = useStore()

  it('an active key is found by its hash, with its user', async () => {
    const user = await insertUser(store().db, userRow())
    const key = keyRow(user.id, { label: 'ci', expires_at: '2031-01-01T00:00:00.000Z' })
    assert.deepEqual(await insertApiKey(store().db, key), key)
    assert.deepEqual(await findActiveKeyByHash(store().db, key.key_hash, NOW), { key, user })
    assert.deepEqual(await findApiKeyById(store().db, key.id), key)
  })

  it('revoked and expired keys are not active', async () => {
    const user = await insertUser(store().db, userRow())
    const revoked = await insertApiKey(store().db, keyRow(user.id, { revoked_at: NOW }))
    const expired = await insertApiKey(
      store().db,
      keyRow(user.id, { expires_at: '2030-06-01T11:59:59.999Z' }),
    )
    const expiresNow = await insertApiKey(store().db, keyRow(user.id, { expires_at: NOW }))
    for (const k of [revoked, expired, expiresNow])
      assert.equal(await findActiveKeyByHash(store().db, k.key_hash, NOW), undefined)
  })

  it('revoking keeps the first revocation time and answers undefined for unknown keys', async () => {
    const user = await insertUser(store().db, userRow())
    const key = await insertApiKey(store().db, keyRow(user.id))
    const first = await revokeApiKey(store().db, key.id, '2030-01-01T00:00:00.000Z')
    assert.equal(first?.revoked_at, '2030-01-01T00:00:00.000Z')
    const again = await revokeApiKey(store().db, key.id, '2030-02-01T00:00:00.000Z')
    assert.equal(again?.revoked_at, '2030-01-01T00:00:00.000Z')
    assert.equal(await revokeApiKey(store().db, 'nope', NOW), undefined)
  })

  it('key hashes are unique', async () => {
    const user = await insertUser(store().db, userRow())
    const key = await insertApiKey(store().db, keyRow(user.id))
    await assert.rejects(insertApiKey(store().db, keyRow(user.id, { key_hash: key.key_hash })))
  })

  it("lists one user's keys in creation order", async () => {
    const user = await insertUser(store().db, userRow())
    const other = await insertUser(store().db, userRow())
    const at = (s: number) => `2030-01-01T00:00:0${s}.000Z`
    const b = await insertApiKey(store().db, keyRow(user.id, { created_at: at(2) }))
    const a = await insertApiKey(store().db, keyRow(user.id, { created_at: at(1) }))
    await insertApiKey(store().db, keyRow(other.id))
    assert.deepEqual(
      (await listApiKeys(store().db, user.id)).map((k) => k.id),
      [a.id, b.id],
    )
  })

  it("deleting a user deletes the user's keys (foreign key cascade)", async () => {
    const user = await insertUser(store().db, userRow())
    const key = await insertApiKey(store().db, keyRow(user.id))
    await store().db.deleteFrom('users').where('id', '=', user.id).execute()
    assert.equal(await findApiKeyById(store().db, key.id), undefined)
  })

  it('a key for an unknown user is refused (foreign key)', async () => {
    await assert.rejects(insertApiKey(store().db, keyRow('no-such-user')))
  })
})
