import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  asSession,
  astralPassword,
  GOOD_PASSWORD,
  sessionCookieOf,
  signInUser,
  signUpUser,
} from '../helpers/accounts.ts'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'

// docs/accounts.md#signing-up, #signing-in, #sessions; docs/api.md#sign-up-sign-in-and-sessions

/** An app with SIGNUP=open and one account, ada@example.com. */
async function openSignup(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx, { deps: { signup: 'open' } })
  await signUpUser(t)
  return { t, users: {}, vars: {} }
}

const signup = (body: unknown) => ({ method: 'POST' as const, url: '/v1/auth/signup', body })
const login = (body: unknown) => ({ method: 'POST' as const, url: '/v1/auth/login', body })

runScenarios('sign-up and sign-in: the input rules', openSignup, [
  {
    name: 'sign-up: a new e-mail, a name and a good password make an account (201, cookie)',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: GOOD_PASSWORD }),
    expectStatus: 201,
    expect: (body, _ctx, res) => {
      assert.equal(body.email, 'bo@example.com')
      assert.equal(body.authLevel, 'verified', 'no SMTP: verified at sign-up')
      assert.equal(body.hasPassword, true)
      assert.ok(sessionCookieOf(res))
    },
  },
  {
    name: 'sign-up: the e-mail is compared case-insensitively: ADA@Example.COM is taken (409)',
    as: null,
    ...signup({ email: 'ADA@Example.COM', name: 'Ada 2', password: GOOD_PASSWORD }),
    expectStatus: 409,
    expectErrorCode: 'conflict',
  },
  {
    name: 'sign-up: an e-mail without a domain is refused (400)',
    as: null,
    ...signup({ email: 'bo@', name: 'Bo', password: GOOD_PASSWORD }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'sign-up: an e-mail of 255 characters is refused (at most 254)',
    as: null,
    ...signup({
      email: `${'a'.repeat(64)}@${'b'.repeat(186)}.com`,
      name: 'Bo',
      password: GOOD_PASSWORD,
    }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'sign-up: a name of 61 characters is refused (1 to 60)',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'n'.repeat(61), password: GOOD_PASSWORD }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'sign-up: a name of 60 emoji is fine (code points)',
    as: null,
    ...signup({ email: 'bo@example.com', name: '🟢'.repeat(60), password: GOOD_PASSWORD }),
    expectStatus: 201,
  },
  {
    name: 'sign-up: a blank name is refused (the text rules)',
    as: null,
    ...signup({ email: 'bo@example.com', name: '\u200b ', password: GOOD_PASSWORD }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'sign-up: a password of 11 characters is refused',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: 'x'.repeat(11) }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'sign-up: a password of 11 astral characters is refused (code points, not UTF-16 units)',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: '𝄞'.repeat(11) }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'sign-up: a password of 12 astral characters is fine',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: astralPassword(12) }),
    expectStatus: 201,
  },
  {
    name: 'sign-up: a password of 256 characters is fine',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: astralPassword(256) }),
    expectStatus: 201,
  },
  {
    name: 'sign-up: a password of 257 characters is refused',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: '😀'.repeat(257) }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'sign-up: a common password is refused, whatever its case (QWERTY123456)',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: 'QWERTY123456' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (body) => assert.equal(body.errors[0].field, 'password'),
  },
  {
    name: 'sign-up: password1234 is refused: found in the large common-password list (finding 12)',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: 'password1234' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (body) => {
      assert.equal(body.errors[0].field, 'password')
      assert.match(body.errors[0].message, /list of common passwords/)
    },
  },
  {
    name: 'sign-up: Password1234! is refused: the strength estimator scores it below 3 of 4 (finding 12)',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: 'Password1234!' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (body) => {
      assert.equal(body.errors[0].field, 'password')
      assert.match(body.errors[0].message, /too easy to guess/)
    },
  },
  {
    name: 'sign-up: unknown properties are refused',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: GOOD_PASSWORD, plan: 'pro' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'sign-in: the right password, the e-mail in another case (200, cookie)',
    as: null,
    ...login({ email: 'Ada@EXAMPLE.com', password: GOOD_PASSWORD }),
    expectStatus: 200,
    expect: (body, _ctx, res) => {
      assert.equal(body.email, 'ada@example.com')
      assert.ok(sessionCookieOf(res))
    },
  },
  {
    name: 'sign-in: a wrong password is 401 invalidCredentials',
    as: null,
    ...login({ email: 'ada@example.com', password: 'not the password' }),
    expectStatus: 401,
    expectErrorCode: 'invalidCredentials',
  },
  {
    name: 'sign-in: an unknown e-mail is 401 invalidCredentials',
    as: null,
    ...login({ email: 'nobody@example.com', password: GOOD_PASSWORD }),
    expectStatus: 401,
    expectErrorCode: 'invalidCredentials',
  },
  {
    name: 'sign-in: a missing password is refused (400)',
    as: null,
    ...login({ email: 'ada@example.com' }),
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'sign-in: a browser request from another site is refused (login CSRF)',
    as: null,
    ...login({ email: 'ada@example.com', password: GOOD_PASSWORD }),
    headers: { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
    expectStatus: 403,
    expectErrorCode: 'csrfRejected',
  },
  {
    name: 'sign-up: a browser request from another site is refused (login CSRF)',
    as: null,
    ...signup({ email: 'bo@example.com', name: 'Bo', password: GOOD_PASSWORD }),
    headers: { origin: 'http://evil.example' },
    expectStatus: 403,
    expectErrorCode: 'csrfRejected',
  },
])

describe('sign-up is by invitation unless SIGNUP=open', () => {
  it('SIGNUP=invite (the default): sign-up is 403 forbidden, and no account is made', async (ctx) => {
    const t = await makeApp(ctx)
    const res = await t.request(null, 'POST', '/v1/auth/signup', {
      email: 'bo@example.com',
      name: 'Bo',
      password: GOOD_PASSWORD,
    })
    assert.equal(res.statusCode, 403)
    assert.equal(res.json().errorCode, 'forbidden')
    assert.match(res.json().message, /invitation/)
    assert.equal(sessionCookieOf(res), undefined)
    const users = await t.database.db.selectFrom('users').select('id').execute()
    assert.equal(users.length, 0)
  })
})

describe('the session cookie (docs/accounts.md#sessions)', () => {
  it('the cookie is HttpOnly, SameSite=Lax, Path=/, lasts 90 days, and is not Secure over http', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const res = await t.request(null, 'POST', '/v1/auth/signup', {
      email: 'bo@example.com',
      name: 'Bo',
      password: GOOD_PASSWORD,
    })
    const cookie = sessionCookieOf(res)
    assert.ok(cookie)
    assert.match(cookie.value, /^sds_[A-Za-z0-9]{43}$/)
    const attributes = cookie.attributes.split(/;\s*/).sort()
    assert.deepEqual(attributes, [
      'HttpOnly',
      `Max-Age=${90 * 24 * 3600}`,
      'Path=/',
      'SameSite=Lax',
    ])
  })

  it('the cookie is Secure when PUBLIC_URL is https', async (ctx) => {
    const t = await makeApp(ctx, {
      deps: { signup: 'open', publicUrl: 'https://status.example.com' },
    })
    const res = await t.request(
      null,
      'POST',
      '/v1/auth/signup',
      { email: 'bo@example.com', name: 'Bo', password: GOOD_PASSWORD },
      { origin: 'https://status.example.com' },
    )
    assert.equal(res.statusCode, 201, res.body)
    assert.match(sessionCookieOf(res)?.attributes ?? '', /(^|; )Secure(;|$)/)
  })

  it('the token is stored hashed: the database holds no cookie value', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const { cookie } = await signUpUser(t)
    const rows = await t.database.db.selectFrom('sessions').selectAll().execute()
    assert.equal(rows.length, 1)
    assert.ok(!JSON.stringify(rows).includes(cookie))
  })

  it('a key and a cookie together: the key decides who calls', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const { id } = await signUpUser(t)
    const other = await t.user({ name: 'Other' })
    const res = await t.request(other, 'GET', '/v1/user', undefined, {
      cookie: `statusd_session=${await signInUser(t)}`,
    })
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().id, other.id)
    assert.notEqual(res.json().id, id)
  })

  it('checkAuth with a key answers as before; with a cookie it names the session user', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const { id, cookie } = await signUpUser(t)
    const res = await asSession(t, cookie, 'GET', '/v1/checkAuth')
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().userId, id)
  })

  it('session fixation: a cookie presented at sign-in is never adopted; a new token is set', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const { cookie: before } = await signUpUser(t)
    const planted = `sds_${'A'.repeat(43)}`
    for (const presented of [before, planted]) {
      const res = await t.request(
        null,
        'POST',
        '/v1/auth/login',
        { email: 'ada@example.com', password: GOOD_PASSWORD },
        { cookie: `statusd_session=${presented}` },
      )
      assert.equal(res.statusCode, 200)
      const after = sessionCookieOf(res)?.value
      assert.ok(after)
      assert.notEqual(after, presented)
    }
    // the planted token never became a session
    assert.equal((await asSession(t, planted, 'GET', '/v1/user')).statusCode, 401)
  })

  it('sign-out: 204, the cookie is cleared, and the session no longer works', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const { cookie } = await signUpUser(t)
    const res = await asSession(t, cookie, 'POST', '/v1/auth/logout')
    assert.equal(res.statusCode, 204)
    assert.match(String(res.headers['set-cookie']), /^statusd_session=;.*Max-Age=0/)
    const after = await asSession(t, cookie, 'GET', '/v1/user')
    assert.equal(after.statusCode, 401)
    assert.equal(after.json().errorCode, 'unauthorized')
    assert.equal((await t.database.db.selectFrom('sessions').selectAll().execute()).length, 0)
  })

  it('sign-out without a session is 204 too', async (ctx) => {
    const t = await makeApp(ctx)
    assert.equal((await t.request(null, 'POST', '/v1/auth/logout')).statusCode, 204)
  })
})

describe('CSRF: a state-changing request authenticated by the cookie comes from the own origin', () => {
  const cases: { name: string; headers: Record<string, string>; expectStatus: number }[] = [
    { name: 'no Origin, no Sec-Fetch-Site: refused', headers: {}, expectStatus: 403 },
    {
      name: 'Origin of another site: refused',
      headers: { origin: 'http://evil.example' },
      expectStatus: 403,
    },
    {
      name: 'Sec-Fetch-Site cross-site: refused',
      headers: { 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' },
      expectStatus: 403,
    },
    {
      name: 'Sec-Fetch-Site same-site (a sibling subdomain): refused',
      headers: { 'sec-fetch-site': 'same-site', origin: 'http://other.localhost:80' },
      expectStatus: 403,
    },
    {
      name: "Origin the request's own (PUBLIC_URL unset): allowed",
      headers: { origin: 'http://localhost:80' },
      expectStatus: 200,
    },
    {
      name: 'Sec-Fetch-Site same-origin: allowed',
      headers: { 'sec-fetch-site': 'same-origin' },
      expectStatus: 200,
    },
  ]
  for (const c of cases)
    it(`PATCH /v1/user with the cookie, ${c.name}`, async (ctx) => {
      const t = await makeApp(ctx, { deps: { signup: 'open' } })
      const { cookie } = await signUpUser(t)
      const res = await t.request(
        null,
        'PATCH',
        '/v1/user',
        { name: 'Changed' },
        {
          cookie: `statusd_session=${cookie}`,
          ...c.headers,
        },
      )
      assert.equal(res.statusCode, c.expectStatus, res.body)
      const name = (await asSession(t, cookie, 'GET', '/v1/user')).json().name
      if (c.expectStatus === 403) {
        assert.equal(res.json().errorCode, 'csrfRejected')
        assert.equal(name, 'Ada', 'nothing changed')
      } else assert.equal(name, 'Changed')
    })

  it("with PUBLIC_URL set, the Origin must be PUBLIC_URL's", async (ctx) => {
    const t = await makeApp(ctx, {
      deps: { signup: 'open', publicUrl: 'http://status.example.com:8080' },
    })
    const res = await t.request(
      null,
      'POST',
      '/v1/auth/signup',
      { email: 'bo@example.com', name: 'Bo', password: GOOD_PASSWORD },
      { origin: 'http://status.example.com:8080' },
    )
    const cookie = sessionCookieOf(res)?.value as string
    const from = (origin: string) =>
      t.request(
        null,
        'PATCH',
        '/v1/user',
        { name: 'Changed' },
        {
          cookie: `statusd_session=${cookie}`,
          origin,
        },
      )
    assert.equal((await from('http://localhost:80')).statusCode, 403)
    assert.equal((await from('http://status.example.com:8080')).statusCode, 200)
  })

  it('a GET with the cookie needs no Origin', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const { cookie } = await signUpUser(t)
    const res = await t.request(null, 'GET', '/v1/user', undefined, {
      cookie: `statusd_session=${cookie}`,
      origin: 'http://evil.example',
    })
    assert.equal(res.statusCode, 200)
  })

  it('API keys are unaffected: a key write from any origin works', async (ctx) => {
    const t = await makeApp(ctx)
    const user = await t.user()
    const res = await t.request(
      user,
      'PATCH',
      '/v1/user',
      { name: 'Changed' },
      {
        origin: 'http://evil.example',
        'sec-fetch-site': 'cross-site',
      },
    )
    assert.equal(res.statusCode, 200, res.body)
  })
})
