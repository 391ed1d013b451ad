import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ensureFirstUser } from '../../src/modules/users/first-user.ts'
import { asSession, signUpUser } from '../helpers/accounts.ts'
import { makeApp } from '../helpers/app.ts'

// Operators (docs/operations.md#operators): the first user is one, only an operator's key may
// hold the scope `admin`, and a disabled account's credentials stop working at once.

describe('operators', () => {
  it('the first user is an operator, and the key the first start prints holds admin', async (ctx) => {
    const t = await makeApp(ctx)
    const first = await ensureFirstUser(t.database.db, t.app.plans)
    assert.ok(first)
    const row = await t.database.db
      .selectFrom('users')
      .select('admin')
      .where('id', '=', first.user.id)
      .executeTakeFirstOrThrow()
    assert.equal(Number(row.admin), 1)
    const keys = await t.request({ id: first.user.id, key: first.key }, 'GET', '/v1/user/api-keys')
    assert.equal(keys.statusCode, 200, keys.body)
    assert.ok(keys.json()[0].scopes.includes('admin'), keys.body)
  })

  it("only an operator's key may hold the scope admin", async (ctx) => {
    const t = await makeApp(ctx)
    const user = await t.user()
    const own = await t.request(user, 'GET', '/v1/user/api-keys')
    assert.ok(!own.json()[0].scopes.includes('admin'), 'a user who is not one gets no admin')
    const t2 = await makeApp(ctx, { deps: { signup: 'open' } })
    const { cookie } = await signUpUser(t2)
    const res = await asSession(t2, cookie, 'POST', '/v1/user/api-keys', { scopes: ['admin'] })
    assert.equal(res.statusCode, 400, res.body)
    assert.deepEqual(res.json().errors[0], {
      field: 'scopes',
      message: "only an operator's key may hold the scope admin",
    })
    const check = await asSession(t2, cookie, 'GET', '/v1/checkAuth')
    assert.ok(!check.json().credential.scopes.includes('admin'), check.body)
  })

  it("a disabled account's keys get 401", async (ctx) => {
    const t = await makeApp(ctx, { keyCacheTtlMs: 0 })
    const user = await t.user()
    assert.equal((await t.request(user, 'GET', '/v1/checkAuth')).statusCode, 200)
    await t.database.db
      .updateTable('users')
      .set({ disabled_at: new Date().toISOString() })
      .where('id', '=', user.id)
      .execute()
    const res = await t.request(user, 'GET', '/v1/checkAuth')
    assert.equal(res.statusCode, 401, res.body)
    assert.match(res.json().message, /disabled/)
  })
})
