import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { AppDeps } from '../../src/app.ts'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { chromiumMissing, launchChromium } from '../helpers/browser.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { testClock } from '../helpers/clock.ts'
import { freePort, openPasskeyPage, type PasskeyPage } from '../helpers/webauthn.ts'

// Passkeys end to end (docs/accounts.md#passkeys): real Chromium, its virtual authenticator
// (the DevTools protocol's WebAuthn domain) as the person's device, a real statusd listening
// on a socket, and @simplewebauthn/server verifying every answer. Nothing is mocked.

/** An app listening on 127.0.0.1 with PUBLIC_URL=http://localhost:<port> (a secure context). */
async function passkeyApp(
  ctx: Lifetime,
  deps: Omit<Partial<AppDeps>, 'database' | 'plans'> = {},
): Promise<{ t: TestApp; origin: string }> {
  const port = await freePort()
  const origin = `http://localhost:${port}`
  const t = await makeApp(ctx, { deps: { ...deps, publicUrl: origin } })
  await t.app.listen({ port, host: '127.0.0.1' })
  return { t, origin }
}

describe('passkeys in real Chromium', { skip: chromiumMissing(), timeout: 180_000 }, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  /**
   * A page of `origin` with its own virtual authenticator, closed when the test ends.
   * note: the pages of the (persistent) context share cookies: each test starts with none
   */
  async function personPage(ctx: Lifetime, origin: string): Promise<PasskeyPage> {
    await browser.context.clearCookies()
    const p = await openPasskeyPage(browser.context, origin)
    ctx.after(() => p.page.close())
    return p
  }

  it('signed in with a password, registers a passkey; signed out, signs in with it alone', async (ctx) => {
    const { t, origin } = await passkeyApp(ctx, { signup: 'open' })
    const p = await personPage(ctx, origin)
    const account = { email: 'ada@example.com', name: 'Ada', password: GOOD_PASSWORD }
    const signedUp = await p.call('POST', '/v1/auth/signup', account)
    assert.equal(signedUp.status, 201, JSON.stringify(signedUp))
    const userId = signedUp.body.id
    assert.equal((await p.call('POST', '/v1/auth/logout')).status, 204)
    const byPassword = await p.call('POST', '/v1/auth/login', {
      email: account.email,
      password: account.password,
    })
    assert.equal(byPassword.status, 200)

    // registered with the session cookie alone
    const r = await p.register({ name: 'Laptop' })
    assert.equal(r.status, 201, JSON.stringify(r))
    assert.equal(r.body.name, 'Laptop')
    assert.deepEqual(r.body.transports, ['internal'])
    const listed = await p.call('GET', '/v1/user/passkeys')
    assert.deepEqual(
      listed.body.map((k: { id: string }) => k.id),
      [r.body.id],
    )

    assert.equal((await p.call('POST', '/v1/auth/logout')).status, 204)
    assert.equal((await p.call('GET', '/v1/user')).status, 401, 'signed out')

    // no password, no e-mail: the authenticator offers the passkey it holds
    const signedIn = await p.signIn()
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn))
    assert.equal(signedIn.body.id, userId)
    assert.equal(signedIn.body.email, account.email)
    const me = await p.call('GET', '/v1/user')
    assert.equal(me.status, 200, 'the new cookie works')
    assert.equal(me.body.id, userId)
    const check = await p.call('GET', '/v1/checkAuth')
    assert.equal(check.body.userId, userId)
    const sessions = await p.call('GET', '/v1/user/sessions')
    const current = sessions.body.find((s: { current: boolean }) => s.current)
    assert.equal(current.method, 'passkey')

    const [passkey] = (await p.call('GET', '/v1/user/passkeys')).body
    assert.notEqual(passkey.lastUsedAt, null, 'the sign-in is recorded')
    const [credential] = await p.credentials()
    const row = await t.database.db
      .selectFrom('passkeys')
      .select('counter')
      .executeTakeFirstOrThrow()
    assert.equal(Number(row.counter), credential?.signCount, "the authenticator's counter is kept")
    assert.ok(Number(row.counter) > 0)
  })

  it('a signed-out browser cannot register a passkey: 401', async (ctx) => {
    const { origin } = await passkeyApp(ctx, { signup: 'open' })
    const p = await personPage(ctx, origin)
    const account = { email: 'bo@example.com', name: 'Bo', password: GOOD_PASSWORD }
    assert.equal((await p.call('POST', '/v1/auth/signup', account)).status, 201)
    assert.equal((await p.call('POST', '/v1/auth/logout')).status, 204)
    const r = await p.register()
    assert.equal(r.step, 'options')
    assert.equal(r.status, 401)
    assert.equal(r.body.errorCode, 'unauthorized')
  })

  it('an answer used once signs no one in again (replay)', async (ctx) => {
    const { t, origin } = await passkeyApp(ctx)
    const alice = await t.user()
    const p = await personPage(ctx, origin)
    assert.equal((await p.register({ headers: { 'service-api-key': alice.key } })).status, 201)
    const first = await p.signIn()
    assert.equal(first.status, 200)
    const again = await p.call('POST', '/v1/auth/passkey/login', {
      challengeId: first.challengeId,
      response: first.response,
    })
    assert.equal(again.status, 401)
    assert.equal(again.body.errorCode, 'invalidCredentials')
  })

  it('one answer posted twice at once signs in once', async (ctx) => {
    const { t, origin } = await passkeyApp(ctx)
    const alice = await t.user()
    const p = await personPage(ctx, origin)
    assert.equal((await p.register({ headers: { 'service-api-key': alice.key } })).status, 201)
    const a = await p.assert()
    const body = { challengeId: a.challengeId, response: a.response }
    const [first, second] = await Promise.all([
      t.request(null, 'POST', '/v1/auth/passkey/login', body),
      t.request(null, 'POST', '/v1/auth/passkey/login', body),
    ])
    assert.deepEqual([first.statusCode, second.statusCode].sort(), [200, 401])
    const sessions = await t.database.db
      .selectFrom('sessions')
      .select('id')
      .where('user_id', '=', alice.id)
      .execute()
    assert.equal(sessions.length, 1)
  })

  it('an answer to another challenge is refused, and leaves both challenges open', async (ctx) => {
    const { t, origin } = await passkeyApp(ctx)
    const alice = await t.user()
    const p = await personPage(ctx, origin)
    assert.equal((await p.register({ headers: { 'service-api-key': alice.key } })).status, 201)
    const a = await p.assert()
    const b = await p.assert()
    const crossed = await p.call('POST', '/v1/auth/passkey/login', {
      challengeId: b.challengeId,
      response: a.response,
    })
    assert.equal(crossed.status, 401)
    assert.equal(crossed.body.errorCode, 'invalidCredentials')
    // note: in the order they were made: each answer carries the authenticator's next
    // signature counter, and one lower than the last seen is refused as a cloned key's
    for (const answer of [a, b]) {
      const ok = await p.call('POST', '/v1/auth/passkey/login', {
        challengeId: answer.challengeId,
        response: answer.response,
      })
      assert.equal(ok.status, 200, JSON.stringify(ok))
    }
  })

  it('an expired challenge signs no one in', async (ctx) => {
    const clock = testClock()
    const { t, origin } = await passkeyApp(ctx, { clock })
    const alice = await t.user()
    const p = await personPage(ctx, origin)
    assert.equal((await p.register({ headers: { 'service-api-key': alice.key } })).status, 201)
    const a = await p.assert()
    clock.advance(5 * 60 * 1000)
    const late = await p.call('POST', '/v1/auth/passkey/login', {
      challengeId: a.challengeId,
      response: a.response,
    })
    assert.equal(late.status, 401)
    assert.equal(late.body.errorCode, 'invalidCredentials')
  })

  it('a deleted passkey signs no one in', async (ctx) => {
    const { t, origin } = await passkeyApp(ctx)
    const alice = await t.user()
    const p = await personPage(ctx, origin)
    const r = await p.register({ headers: { 'service-api-key': alice.key } })
    assert.equal(r.status, 201)
    assert.equal(
      (await t.request(alice, 'DELETE', `/v1/user/passkeys/${r.body.id}`)).statusCode,
      204,
    )
    const refused = await p.signIn()
    assert.equal(refused.status, 401)
    assert.equal(refused.body.errorCode, 'invalidCredentials')
  })

  it('a passkey of one user never signs in as another', async (ctx) => {
    const { t, origin } = await passkeyApp(ctx)
    const alice = await t.user()
    const bob = await t.user()
    const pa = await personPage(ctx, origin)
    const pb = await personPage(ctx, origin)
    assert.equal((await pa.register({ headers: { 'service-api-key': alice.key } })).status, 201)
    const bobs = await pb.register({ headers: { 'service-api-key': bob.key } })
    assert.equal(bobs.status, 201, JSON.stringify(bobs))

    // Alice's answer, claiming Bob's user handle or Bob's credential: refused
    const a = await pa.assert()
    const handles = [
      { ...a.response.response, userHandle: Buffer.from(bob.id).toString('base64url') },
    ]
    for (const response of handles) {
      const res = await pa.call('POST', '/v1/auth/passkey/login', {
        challengeId: a.challengeId,
        response: { ...a.response, response },
      })
      assert.equal(res.status, 401)
    }
    const asBobsCredential = await pa.call('POST', '/v1/auth/passkey/login', {
      challengeId: a.challengeId,
      response: { ...a.response, id: bobs.response.id, rawId: bobs.response.rawId },
    })
    assert.equal(asBobsCredential.status, 401)
    // and as it is, it signs in Alice
    const ok = await pa.call('POST', '/v1/auth/passkey/login', {
      challengeId: a.challengeId,
      response: a.response,
    })
    assert.equal(ok.status, 200)
    assert.equal(ok.body.id, alice.id)
  })

  it('registration without a session or key is 401', async (ctx) => {
    const { origin } = await passkeyApp(ctx)
    const p = await personPage(ctx, origin)
    const r = await p.register()
    assert.equal(r.step, 'options')
    assert.equal(r.status, 401)
  })

  it('an authenticator holding a passkey of the user makes no second one (excluded)', async (ctx) => {
    const { t, origin } = await passkeyApp(ctx)
    const alice = await t.user()
    const p = await personPage(ctx, origin)
    assert.equal((await p.register({ headers: { 'service-api-key': alice.key } })).status, 201)
    const again = await p.register({ headers: { 'service-api-key': alice.key } })
    assert.equal(again.step, 'create')
    assert.match(again.error ?? '', /InvalidStateError/)
    assert.equal((await t.request(alice, 'GET', '/v1/user/passkeys')).json().length, 1)
  })

  it('a registration answer posted twice stores one passkey', async (ctx) => {
    const { t, origin } = await passkeyApp(ctx)
    const alice = await t.user()
    const p = await personPage(ctx, origin)
    const r = await p.register({ headers: { 'service-api-key': alice.key } })
    assert.equal(r.status, 201)
    const twice = await p.call(
      'POST',
      '/v1/user/passkeys',
      { response: r.response },
      { 'service-api-key': alice.key },
    )
    assert.equal(twice.status, 400)
    assert.equal(twice.body.errorCode, 'validationError')
    assert.equal((await t.request(alice, 'GET', '/v1/user/passkeys')).json().length, 1)
  })

  it("an answer to another user's registration challenge registers nothing", async (ctx) => {
    const { t, origin } = await passkeyApp(ctx)
    const alice = await t.user()
    const bob = await t.user()
    const p = await personPage(ctx, origin)
    // Alice's browser answers Alice's options; Bob posts the answer as his own first
    const asBob = await p.register({
      headers: { 'service-api-key': alice.key },
      postHeaders: { 'service-api-key': bob.key },
    })
    assert.equal(asBob.status, 400)
    assert.equal(asBob.body.errorCode, 'validationError')
    assert.equal((await t.request(bob, 'GET', '/v1/user/passkeys')).json().length, 0)
    // the challenge is still Alice's to answer
    const asAlice = await p.call(
      'POST',
      '/v1/user/passkeys',
      { response: asBob.response },
      { 'service-api-key': alice.key },
    )
    assert.equal(asAlice.status, 201)
  })
})
