import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { makeApp } from '../helpers/app.ts'
import { chromiumMissing, launchChromium } from '../helpers/browser.ts'
import { freePort, openPasskeyPage } from '../helpers/webauthn.ts'
import { makeOperator } from './operators.ts'

// A disabled account signs in by no method (docs/operations.md#operators): a passkey too, in
// real Chromium with its virtual authenticator; enabled again, the same passkey works, and
// the refused attempt left the passkey as it was.

describe('a disabled account and its passkey', {
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

  it('a disabled account cannot sign in with its passkey (403); enabled, it can', async (ctx) => {
    const port = await freePort()
    const origin = `http://localhost:${port}`
    const t = await makeApp(ctx, { deps: { publicUrl: origin, signup: 'open' } })
    await t.app.listen({ port, host: '127.0.0.1' })
    const operator = await makeOperator(t)
    await browser.context.clearCookies()
    const p = await openPasskeyPage(browser.context, origin)
    ctx.after(() => p.page.close())
    const account = { email: 'ada@example.com', name: 'Ada', password: GOOD_PASSWORD }
    const signedUp = await p.call('POST', '/v1/auth/signup', account)
    assert.equal(signedUp.status, 201, JSON.stringify(signedUp))
    const registered = await p.register({ name: 'Laptop' })
    assert.equal(registered.status, 201, JSON.stringify(registered))
    assert.equal((await p.call('POST', '/v1/auth/logout')).status, 204)

    const userUrl = `/v1/admin/users/${signedUp.body.id}`
    const off = await t.request(operator, 'PATCH', userUrl, { disabled: true })
    assert.equal(off.statusCode, 200, off.body)
    const refused = await p.signIn()
    assert.equal(refused.status, 403, JSON.stringify(refused))
    assert.equal(refused.body.errorCode, 'forbidden')
    assert.equal((await p.call('GET', '/v1/user')).status, 401, 'no session began')
    const [passkey] = await t.database.db.selectFrom('passkeys').selectAll().execute()
    assert.equal(passkey?.last_used_at, null, 'the refused sign-in left the passkey unused')

    const on = await t.request(operator, 'PATCH', userUrl, { disabled: false })
    assert.equal(on.statusCode, 200, on.body)
    const signedIn = await p.signIn()
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn))
    assert.equal(signedIn.body.id, signedUp.body.id)
  })
})
