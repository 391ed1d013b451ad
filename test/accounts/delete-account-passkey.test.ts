import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { GOOD_PASSWORD, signUpUser } from '../helpers/accounts.ts'
import { makeApp } from '../helpers/app.ts'
import { chromiumMissing, launchChromium } from '../helpers/browser.ts'
import { freePort, openPasskeyPage } from '../helpers/webauthn.ts'

// Deleting your account with a passkey instead of the password
// (docs/accounts.md#delete-your-account): a fresh assertion by one of your passkeys, in real
// Chromium with its virtual authenticator. One by someone else's passkey confirms nothing.

describe('deleting an account, confirmed by a passkey', {
  skip: chromiumMissing(),
  timeout: 180_000,
}, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  it("another account's passkey is 403 and deletes nothing; your own deletes the account", async (ctx) => {
    const port = await freePort()
    const origin = `http://localhost:${port}`
    const t = await makeApp(ctx, { deps: { publicUrl: origin, signup: 'open' } })
    await t.app.listen({ port, host: '127.0.0.1' })
    await browser.context.clearCookies()
    const p = await openPasskeyPage(browser.context, origin)
    ctx.after(() => p.page.close())
    const signedUp = await p.call('POST', '/v1/auth/signup', {
      email: 'ada@example.com',
      name: 'Ada',
      password: GOOD_PASSWORD,
    })
    assert.equal(signedUp.status, 201, JSON.stringify(signedUp))
    const registered = await p.register({ name: 'Laptop' })
    assert.equal(registered.status, 201, JSON.stringify(registered))

    // Bob, signed in elsewhere, presents Ada's fresh assertion
    const bob = await signUpUser(t, { email: 'bob@example.com', name: 'Bob' })
    const stolen = await p.assert()
    assert.ok(stolen.response, JSON.stringify(stolen))
    const refused = await t.request(
      null,
      'DELETE',
      '/v1/user',
      { passkey: { challengeId: stolen.challengeId, response: stolen.response } },
      { cookie: `statusd_session=${bob.cookie}`, 'sec-fetch-site': 'same-origin' },
    )
    assert.equal(refused.statusCode, 403, refused.body)
    assert.equal(refused.json().errorCode, 'forbidden')
    const users = await t.database.db.selectFrom('users').select('name').orderBy('name').execute()
    assert.deepEqual(
      users.map((u) => u.name),
      ['Ada', 'Bob'],
    )

    // Ada's own, fresh: her account goes, and her page is signed out
    const asserted = await p.assert()
    assert.ok(asserted.response, JSON.stringify(asserted))
    const deleted = await p.call('DELETE', '/v1/user', {
      passkey: { challengeId: asserted.challengeId, response: asserted.response },
    })
    assert.equal(deleted.status, 204, JSON.stringify(deleted))
    assert.equal((await p.call('GET', '/v1/user')).status, 401)
    const left = await t.database.db.selectFrom('users').select('name').execute()
    assert.deepEqual(
      left.map((u) => u.name),
      ['Bob'],
    )
    assert.equal((await t.database.db.selectFrom('passkeys').selectAll().execute()).length, 0)
  })
})
