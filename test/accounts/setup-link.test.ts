import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ensureFirstUser } from '../../src/modules/users/first-user.ts'
import { createSetupLink, SETUP_LINK_LIFETIME_MS } from '../../src/modules/users/setup.service.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { asSession, GOOD_PASSWORD, sessionCookieOf, signInUser } from '../helpers/accounts.ts'
import { makeApp, TEST_PLANS, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'

// The first start's setup link (docs/app.md#the-first-start, docs/api.md#first-run-setup):
// `GET /v1/auth/setup/{token}` says whether it works, `POST /v1/auth/setup/{token}` gives the
// first user a name, an address and a password (or a passkey), signs them in, and uses the
// link. Whatever is refused changes nothing and leaves the link usable.

const SAME_SITE = { 'sec-fetch-site': 'same-origin' }
const ADA = { name: 'Ada Operator', email: 'ada@example.com', password: GOOD_PASSWORD }

interface FirstStart {
  t: TestApp
  clock: TestClock
  userId: string
  token: string
  path: string
}

/** A fresh app whose database has the first user and its setup link, as the first start makes. */
async function firstStart(ctx: Lifetime): Promise<FirstStart> {
  const clock = testClock()
  const t = await makeApp(ctx, { deps: { clock } })
  const first = await ensureFirstUser(t.database.db, TEST_PLANS)
  assert.ok(first)
  const link = await createSetupLink(t.database.db, clock, first.user.id, 'http://127.0.0.1:8080')
  const token = link.url.slice('http://127.0.0.1:8080/setup/'.length)
  assert.match(token, /^sdl_[A-Za-z0-9]{43}$/)
  return { t, clock, userId: first.user.id, token, path: `/v1/auth/setup/${token}` }
}

const complete = (s: FirstStart, body: unknown, headers: Record<string, string> = SAME_SITE) =>
  s.t.request(null, 'POST', s.path, body, headers)

/** The first user as stored: what a refused setup must leave as it was. */
async function firstUser(s: FirstStart) {
  const row = await s.t.database.db
    .selectFrom('users')
    .select(['name', 'email', 'password_hash', 'email_verified_at', 'admin'])
    .where('id', '=', s.userId)
    .executeTakeFirstOrThrow()
  return row
}

/** The first user's security log, oldest first. */
const eventsOf = (s: FirstStart) =>
  s.t.database.db
    .selectFrom('security_events')
    .select(['kind', 'actor_id', 'detail'])
    .where('user_id', '=', s.userId)
    .orderBy('at')
    .execute()

describe('the setup link', () => {
  it('opens while unused: 204, anonymous', async (ctx) => {
    const s = await firstStart(ctx)
    const res = await s.t.request(null, 'GET', s.path)
    assert.equal(res.statusCode, 204, res.body)
  })

  it('sets up the first user with a name, an address and a password, and signs in', async (ctx) => {
    const s = await firstStart(ctx)
    const res = await complete(s, ADA)
    assert.equal(res.statusCode, 200, res.body)
    const profile = res.json()
    assert.equal(profile.id, s.userId, 'the first user, not a new one')
    assert.equal(profile.name, 'Ada Operator')
    assert.equal(profile.email, 'ada@example.com')
    assert.equal(profile.emailVerified, true, 'the operator vouches for their own address')
    assert.equal(profile.hasPassword, true)
    const cookie = sessionCookieOf(res)
    assert.ok(cookie, 'signed in: the session cookie is set')
    const me = await asSession(s.t, cookie.value, 'GET', '/v1/user')
    assert.equal(me.json().id, s.userId)
    // and the password signs in anywhere from now on
    await signInUser(s.t, { email: ADA.email, password: ADA.password })
    // the first user is the operator, and the setup is in its security log
    assert.equal((await firstUser(s)).admin, 1)
    const events = (await eventsOf(s)).map((e) => ({
      kind: e.kind,
      actor: e.actor_id,
      method: JSON.parse(e.detail ?? '{}').method,
    }))
    const sorted = (list: typeof events) =>
      list.map((e) => JSON.stringify(e)).sort((a, b) => a.localeCompare(b))
    assert.deepEqual(
      sorted(events.filter((e) => e.kind !== 'adminGranted' && e.kind !== 'keyCreated')),
      sorted([
        { kind: 'setupCompleted', actor: s.userId, method: 'password' },
        { kind: 'signIn', actor: s.userId, method: 'setup' },
        { kind: 'signIn', actor: s.userId, method: 'password' },
      ]),
    )
  })

  it('works once: used, it answers 410 to both the page and the form', async (ctx) => {
    const s = await firstStart(ctx)
    assert.equal((await complete(s, ADA)).statusCode, 200)
    const again = await complete(s, { ...ADA, name: 'Mallory' })
    assert.equal(again.statusCode, 410, again.body)
    assert.equal(again.json().errorCode, 'gone')
    assert.equal((await s.t.request(null, 'GET', s.path)).statusCode, 410)
    assert.equal((await firstUser(s)).name, 'Ada Operator', 'the second try changed nothing')
  })

  it('expires after a day: 410, and nothing changes', async (ctx) => {
    const s = await firstStart(ctx)
    s.clock.advance(SETUP_LINK_LIFETIME_MS)
    assert.equal((await s.t.request(null, 'GET', s.path)).statusCode, 410)
    const res = await complete(s, ADA)
    assert.equal(res.statusCode, 410, res.body)
    assert.equal((await firstUser(s)).email, null)
  })

  it('two setups at once: exactly one succeeds, the other 410', async (ctx) => {
    const s = await firstStart(ctx)
    const answers = await Promise.all([
      complete(s, ADA),
      complete(s, { ...ADA, name: 'Bea', email: 'bea@example.com' }),
    ])
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [200, 410])
  })
})

describe('a refused setup changes nothing and leaves the link usable', () => {
  const refusals: {
    name: string
    body?: unknown
    path?: (s: FirstStart) => string
    headers?: Record<string, string>
    before?: (s: FirstStart) => Promise<void>
    status: number
    errorCode: string
  }[] = [
    {
      name: 'a password the rules refuse (400)',
      body: { ...ADA, password: 'password1234' },
      status: 400,
      errorCode: 'validationError',
    },
    {
      name: 'no password and no passkey (400)',
      body: { name: ADA.name, email: ADA.email },
      status: 400,
      errorCode: 'validationError',
    },
    {
      name: 'a password and a passkey both (400)',
      body: {
        ...ADA,
        passkey: {
          response: {
            id: 'AA',
            rawId: 'AA',
            type: 'public-key',
            clientExtensionResults: {},
            response: { clientDataJSON: 'AA', attestationObject: 'AA' },
          },
        },
      },
      status: 400,
      errorCode: 'validationError',
    },
    {
      name: 'a passkey answer that answers no challenge (400)',
      body: {
        name: ADA.name,
        email: ADA.email,
        passkey: {
          response: {
            id: 'AA',
            rawId: 'AA',
            type: 'public-key',
            clientExtensionResults: {},
            response: { clientDataJSON: 'e30', attestationObject: 'AA' },
          },
        },
      },
      status: 400,
      errorCode: 'validationError',
    },
    {
      name: 'an e-mail address that is none (400)',
      body: { ...ADA, email: 'ada@' },
      status: 400,
      errorCode: 'validationError',
    },
    {
      name: 'an unknown property (400)',
      body: { ...ADA, admin: false },
      status: 400,
      errorCode: 'validationError',
    },
    {
      name: 'an address another account holds (409)',
      body: { ...ADA, email: 'BEA@example.com' },
      // an account the operator made (`statusd user add`)
      before: async (s) => {
        await createUser(s.t.database.db, TEST_PLANS, {
          name: 'Bea',
          email: 'bea@example.com',
          plan: 'free',
          verified: true,
        })
      },
      status: 409,
      errorCode: 'conflict',
    },
    {
      name: 'a form sent from another site (403)',
      body: ADA,
      headers: { 'sec-fetch-site': 'cross-site' },
      status: 403,
      errorCode: 'csrfRejected',
    },
    {
      name: 'a link never made (404)',
      body: ADA,
      path: () => `/v1/auth/setup/sdl_${'x'.repeat(43)}`,
      status: 404,
      errorCode: 'notFound',
    },
  ]
  for (const r of refusals)
    it(r.name, async (ctx) => {
      const s = await firstStart(ctx)
      await r.before?.(s)
      const before = await firstUser(s)
      const res = await s.t.request(null, 'POST', r.path?.(s) ?? s.path, r.body, {
        ...SAME_SITE,
        ...r.headers,
      })
      assert.equal(res.statusCode, r.status, res.body)
      assert.equal(res.json().errorCode, r.errorCode)
      assert.equal(sessionCookieOf(res), undefined, 'no one is signed in')
      assert.deepEqual(await firstUser(s), before)
      assert.deepEqual(
        (await eventsOf(s)).map((e) => e.kind).sort(),
        ['adminGranted', 'keyCreated'],
        'nothing logged but the first start',
      )
      assert.equal((await s.t.request(null, 'GET', s.path)).statusCode, 204, 'the link still works')
    })
})
