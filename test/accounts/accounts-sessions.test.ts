import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import type { AppDeps } from '../../src/app.ts'
import { ACCOUNT_FAILURES, ADDRESS_FAILURES } from '../../src/modules/users/login-throttle.ts'
import {
  type PasswordHasher,
  scryptHasher,
  scryptHasherWith,
} from '../../src/modules/users/passwords.ts'
import {
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SESSION_TOUCH_MS,
} from '../../src/modules/users/sessions.service.ts'
import {
  asSession,
  GOOD_PASSWORD,
  sessionCookieOf,
  signInUser,
  signUpUser,
} from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { testClock } from '../helpers/clock.ts'
import { SseTestClient } from '../helpers/sse.ts'

// docs/accounts.md#sessions and #locking-an-attacker-out

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE

async function openApp(ctx: Lifetime, deps: Omit<Partial<AppDeps>, 'database' | 'plans'> = {}) {
  const clock = testClock()
  const t = await makeApp(ctx, { deps: { signup: 'open', clock, ...deps } })
  return { t, clock }
}

const login = (t: TestApp, email: string, password: string, headers: Record<string, string> = {}) =>
  t.request(null, 'POST', '/v1/auth/login', { email, password }, headers)

describe('session expiry (injected clock)', () => {
  it('a session used within 14 days stays; one idle for 14 days has ended', async (ctx) => {
    const { t, clock } = await openApp(ctx)
    const { cookie } = await signUpUser(t)
    clock.advance(SESSION_IDLE_MS - MINUTE)
    assert.equal((await asSession(t, cookie, 'GET', '/v1/user')).statusCode, 200)
    // used just now: another 14 days from here
    clock.advance(SESSION_IDLE_MS - MINUTE)
    assert.equal((await asSession(t, cookie, 'GET', '/v1/user')).statusCode, 200)
    clock.advance(SESSION_IDLE_MS)
    const res = await asSession(t, cookie, 'GET', '/v1/user')
    assert.equal(res.statusCode, 401)
    assert.equal(res.json().errorCode, 'unauthorized')
  })

  it('a session ends 90 days after sign-in, however much it is used', async (ctx) => {
    const { t, clock } = await openApp(ctx)
    const { cookie } = await signUpUser(t)
    for (let used = 0; used + 10 * DAY < SESSION_ABSOLUTE_MS; used += 10 * DAY) {
      clock.advance(10 * DAY)
      assert.equal((await asSession(t, cookie, 'GET', '/v1/user')).statusCode, 200)
    }
    clock.advance(SESSION_ABSOLUTE_MS % (10 * DAY) || 10 * DAY)
    assert.equal((await asSession(t, cookie, 'GET', '/v1/user')).statusCode, 401)
  })

  it('last_seen_at is written at most once a minute per session, not once per request', async (ctx) => {
    const { t, clock } = await openApp(ctx)
    const { cookie } = await signUpUser(t)
    const seen = async () =>
      (await t.database.db.selectFrom('sessions').select('last_seen_at').executeTakeFirstOrThrow())
        .last_seen_at
    const first = await seen()
    clock.advance(SESSION_TOUCH_MS - 1)
    for (let i = 0; i < 5; i++) await asSession(t, cookie, 'GET', '/v1/user')
    assert.equal(await seen(), first, 'within the minute: not written')
    clock.advance(1)
    await asSession(t, cookie, 'GET', '/v1/user')
    const second = await seen()
    assert.equal(Date.parse(second) - Date.parse(first), SESSION_TOUCH_MS)
    await asSession(t, cookie, 'GET', '/v1/user')
    assert.equal(await seen(), second)
  })

  it('the session list shows when each session ends: 14 days after its last use', async (ctx) => {
    const { t, clock } = await openApp(ctx)
    const { cookie } = await signUpUser(t)
    clock.advance(2 * MINUTE)
    const [session] = (await asSession(t, cookie, 'GET', '/v1/user/sessions')).json()
    assert.equal(Date.parse(session.expiresAt) - Date.parse(session.lastSeenAt), SESSION_IDLE_MS)
    assert.equal(session.lastSeenAt, new Date(clock.now()).toISOString())
  })
})

describe('listing and ending sessions', () => {
  it('the list marks the current session; a key sees every session and none current', async (ctx) => {
    const { t } = await openApp(ctx)
    const { cookie: first } = await signUpUser(t)
    const second = await signInUser(t)
    const list = (await asSession(t, second, 'GET', '/v1/user/sessions')).json()
    assert.equal(list.length, 2)
    assert.deepEqual(
      list.map((s: { method: string; current: boolean }) => [s.method, s.current]).sort(),
      [
        ['password', true],
        ['signup', false],
      ],
    )
    assert.ok(!JSON.stringify(list).includes(first))
    assert.ok(!JSON.stringify(list).includes(second))
  })

  it("DELETE /v1/user/sessions/:id ends that session; another user's session is 404 and stays", async (ctx) => {
    const { t } = await openApp(ctx)
    const { cookie: mine } = await signUpUser(t)
    const other = await signInUser(t)
    const otherId = (await asSession(t, other, 'GET', '/v1/user/sessions'))
      .json()
      .find((s: { current: boolean }) => s.current).id
    const { cookie: theirs } = await signUpUser(t, { email: 'bo@example.com', name: 'Bo' })
    const stranger = await asSession(t, theirs, 'DELETE', `/v1/user/sessions/${otherId}`)
    assert.equal(stranger.statusCode, 404)
    assert.equal(stranger.json().errorCode, 'notFound')
    assert.equal((await asSession(t, other, 'GET', '/v1/user')).statusCode, 200)
    const res = await asSession(t, mine, 'DELETE', `/v1/user/sessions/${otherId}`)
    assert.equal(res.statusCode, 204)
    assert.equal((await asSession(t, other, 'GET', '/v1/user')).statusCode, 401)
    assert.equal((await asSession(t, mine, 'GET', '/v1/user')).statusCode, 200)
  })

  it('DELETE /v1/user/sessions ends every session but the current one', async (ctx) => {
    const { t } = await openApp(ctx)
    const { cookie: keep } = await signUpUser(t)
    const others = [await signInUser(t), await signInUser(t)]
    const res = await asSession(t, keep, 'DELETE', '/v1/user/sessions')
    assert.equal(res.statusCode, 204)
    for (const cookie of others)
      assert.equal((await asSession(t, cookie, 'GET', '/v1/user')).statusCode, 401)
    const list = (await asSession(t, keep, 'GET', '/v1/user/sessions')).json()
    assert.equal(list.length, 1)
    assert.equal(list[0].current, true)
  })
})

describe('the profile (docs/accounts.md#users)', () => {
  it('GET /v1/user shows the profile; PATCH renames (the first user, "admin", may rename)', async (ctx) => {
    const { t } = await openApp(ctx)
    const admin = await t.user({ name: 'admin' })
    const res = await t.request(admin, 'PATCH', '/v1/user', { name: 'Grace' })
    assert.equal(res.statusCode, 200, res.body)
    const profile = (await t.request(admin, 'GET', '/v1/user')).json()
    assert.deepEqual(Object.keys(profile).sort(), [
      'admin',
      'authLevel',
      'createdAt',
      'email',
      'emailVerified',
      'hasPassword',
      'id',
      'locale',
      'name',
      'plan',
    ])
    assert.equal(profile.name, 'Grace')
    assert.equal(profile.hasPassword, false)
    assert.equal(profile.admin, false)
  })

  it('PATCH /v1/user: an empty body is 400 emptyBody; a taken e-mail in another case is 409', async (ctx) => {
    const { t } = await openApp(ctx)
    const { cookie } = await signUpUser(t)
    await signUpUser(t, { email: 'bo@example.com', name: 'Bo' })
    const empty = await asSession(t, cookie, 'PATCH', '/v1/user', {})
    assert.equal(empty.statusCode, 400)
    assert.equal(empty.json().errorCode, 'emptyBody')
    const taken = await asSession(t, cookie, 'PATCH', '/v1/user', { email: 'BO@example.com' })
    assert.equal(taken.statusCode, 409)
    assert.equal(taken.json().errorCode, 'conflict')
    const own = await asSession(t, cookie, 'PATCH', '/v1/user', { email: 'ADA@example.com' })
    assert.equal(own.statusCode, 200, 'a change of case of your own address is yours')
    assert.equal(own.json().email, 'ADA@example.com')
  })

  it('an e-mail change without SMTP takes effect at once: sign in with the new address', async (ctx) => {
    const { t } = await openApp(ctx)
    const { cookie } = await signUpUser(t)
    const res = await asSession(t, cookie, 'PATCH', '/v1/user', { email: 'ada@new.example' })
    assert.equal(res.statusCode, 200)
    assert.equal((await login(t, 'ada@new.example', GOOD_PASSWORD)).statusCode, 200)
    assert.equal((await login(t, 'ada@example.com', GOOD_PASSWORD)).statusCode, 401)
  })

  it('a password change needs currentPassword; a wrong one is 403, changes nothing, and its message names no API field (the field is in errors)', async (ctx) => {
    const { t } = await openApp(ctx)
    const { cookie } = await signUpUser(t)
    const next = 'a brand new passphrase'
    const missing = await asSession(t, cookie, 'PATCH', '/v1/user', { password: next })
    assert.equal(missing.statusCode, 400)
    assert.equal(missing.json().errors[0].field, 'currentPassword')
    assert.equal(missing.json().message, 'A new password needs the current one')
    const wrong = await asSession(t, cookie, 'PATCH', '/v1/user', {
      password: next,
      currentPassword: 'not my password',
    })
    assert.equal(wrong.statusCode, 403)
    assert.equal(wrong.json().errorCode, 'forbidden')
    assert.equal(wrong.json().message, 'The current password is wrong')
    assert.deepEqual(wrong.json().errors, [
      { field: 'currentPassword', message: 'is not your current password' },
    ])
    assert.equal((await login(t, 'ada@example.com', GOOD_PASSWORD)).statusCode, 200)
    const common = await asSession(t, cookie, 'PATCH', '/v1/user', {
      password: 'qwerty123456',
      currentPassword: GOOD_PASSWORD,
    })
    assert.equal(common.statusCode, 400)
  })

  it('a password change ends the other sessions and keeps the current one', async (ctx) => {
    const { t } = await openApp(ctx)
    const { cookie } = await signUpUser(t)
    const elsewhere = await signInUser(t)
    const next = 'a brand new passphrase'
    const res = await asSession(t, cookie, 'PATCH', '/v1/user', {
      password: next,
      currentPassword: GOOD_PASSWORD,
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal((await asSession(t, elsewhere, 'GET', '/v1/user')).statusCode, 401)
    assert.equal((await asSession(t, cookie, 'GET', '/v1/user')).statusCode, 200)
    assert.equal((await login(t, 'ada@example.com', GOOD_PASSWORD)).statusCode, 401)
    assert.equal((await login(t, 'ada@example.com', next)).statusCode, 200)
  })
})

// note: the limits are the subject here, not the hash: real scrypt, at a cost that keeps 30
// sign-ins quick on a busy machine
const cheapHasher = scryptHasherWith({ ln: 4, r: 8, p: 1 })

describe('brute force (docs/accounts.md#locking-an-attacker-out)', () => {
  it(`after ${ACCOUNT_FAILURES} failures for an account in 15 minutes: 429 with Retry-After, even with the right password; after the window, sign-in works`, async (ctx) => {
    const { t, clock } = await openApp(ctx, { passwordHasher: cheapHasher })
    await signUpUser(t)
    for (let i = 0; i < ACCOUNT_FAILURES; i++)
      assert.equal((await login(t, 'ada@example.com', `wrong guess ${i}`)).statusCode, 401)
    const refused = await login(t, 'ADA@example.com', GOOD_PASSWORD)
    assert.equal(refused.statusCode, 429)
    assert.equal(refused.json().errorCode, 'rateLimited')
    assert.equal(refused.headers['retry-after'], String(15 * 60))
    assert.equal(sessionCookieOf(refused), undefined)
    clock.advance(5 * MINUTE)
    assert.equal((await login(t, 'ada@example.com', GOOD_PASSWORD)).headers['retry-after'], '600')
    clock.advance(10 * MINUTE)
    assert.equal((await login(t, 'ada@example.com', GOOD_PASSWORD)).statusCode, 200)
  })

  it('an unknown e-mail is limited the same way (the limit does not tell which accounts exist)', async (ctx) => {
    const { t } = await openApp(ctx, { passwordHasher: cheapHasher })
    for (let i = 0; i < ACCOUNT_FAILURES; i++)
      assert.equal((await login(t, 'ghost@example.com', `guess ${i} guess`)).statusCode, 401)
    assert.equal((await login(t, 'ghost@example.com', 'another guess')).statusCode, 429)
  })

  it(`after ${ADDRESS_FAILURES} failures from one address, whatever the accounts: 429; another address is not held back`, async (ctx) => {
    const { t } = await openApp(ctx, { trustProxy: 1, passwordHasher: cheapHasher })
    await signUpUser(t)
    const from = (ip: string) => ({ 'x-forwarded-for': ip })
    for (let i = 0; i < ADDRESS_FAILURES; i++) {
      const res = await login(t, `user${i}@example.com`, 'stuffed password', from('203.0.113.7'))
      assert.equal(res.statusCode, 401)
    }
    const refused = await login(t, 'ada@example.com', GOOD_PASSWORD, from('203.0.113.7'))
    assert.equal(refused.statusCode, 429)
    assert.ok(Number(refused.headers['retry-after']) > 0)
    assert.equal(
      (await login(t, 'ada@example.com', GOOD_PASSWORD, from('198.51.100.2'))).statusCode,
      200,
    )
  })

  it('an IPv6 client counts by its /64', async (ctx) => {
    const { t } = await openApp(ctx, { trustProxy: 1, passwordHasher: cheapHasher })
    for (let i = 0; i < ADDRESS_FAILURES; i++) {
      const ip = `2001:db8:1:2::${(i + 1).toString(16)}`
      assert.equal(
        (await login(t, `u${i}@example.com`, 'stuffed password', { 'x-forwarded-for': ip }))
          .statusCode,
        401,
      )
    }
    const res = await login(t, 'new@example.com', 'stuffed password', {
      'x-forwarded-for': '2001:db8:1:2:ffff::1',
    })
    assert.equal(res.statusCode, 429)
  })

  it('a wrong e-mail and a wrong password get the identical answer, each after one password verification', async (ctx) => {
    const verified: string[] = []
    const spy: PasswordHasher = {
      ...scryptHasher,
      verify: (stored, password) => {
        verified.push(stored)
        return scryptHasher.verify(stored, password)
      },
    }
    const { t } = await openApp(ctx, { passwordHasher: spy })
    await signUpUser(t)
    const unknown = await login(t, 'nobody@example.com', GOOD_PASSWORD)
    assert.equal(verified.length, 1, 'the unknown e-mail: one verification (a dummy hash)')
    const wrong = await login(t, 'ada@example.com', 'not the password')
    assert.equal(verified.length, 2, 'the wrong password: one verification')
    assert.match(
      verified[0] as string,
      /^\$scrypt\$ln=14,r=8,p=5\$/,
      'the dummy costs what a real one does',
    )
    assert.notEqual(verified[0], verified[1])
    const shape = (res: typeof unknown) => {
      const { requestId: _id, ...body } = res.json()
      const {
        'x-request-id': _rid,
        date: _date,
        // the anonymous limit's counter and clock move between the two
        'x-ratelimit-remaining': _remaining,
        'x-ratelimit-reset': _reset,
        'content-length': length,
        ...headers
      } = res.headers
      return { status: res.statusCode, body, headers, length }
    }
    assert.deepEqual(shape(unknown), shape(wrong))
  })
})

describe('per-user rate limit for session callers', () => {
  it("a signed-in browser counts against its user's plan (free: 60 a minute), as a key does", async (ctx) => {
    const { t } = await openApp(ctx)
    const { cookie } = await signUpUser(t)
    let last = 0
    for (let i = 0; i < 61; i++) last = (await asSession(t, cookie, 'GET', '/v1/user')).statusCode
    assert.equal(last, 429)
  })
})

describe('open event streams end with their session', () => {
  async function liveStream(ctx: Lifetime) {
    const clock = testClock()
    const t = await makeApp(ctx, {
      keyCacheTtlMs: 1_000,
      deps: { signup: 'open', clock, sse: { heartbeatMs: 50 } },
    })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const { cookie } = await signUpUser(t)
    const created = await asSession(t, cookie, 'POST', '/v1/status-keys/desk', { value: 'IN' })
    assert.equal(created.statusCode, 201, created.body)
    const stream = await SseTestClient.connect(`${base}/v1/status/${created.json().id}/events`, {
      cookie: `statusd_session=${cookie}`,
    })
    assert.equal(stream.response.statusCode, 200)
    assert.equal((await stream.nextEvent()).event, 'status')
    return { t, clock, cookie, stream }
  }

  async function assertEndedUnauthorized(stream: SseTestClient) {
    const end = await stream.nextEvent()
    assert.equal(end.event, 'unavailable')
    assert.deepEqual(JSON.parse(end.data), { reason: 'unauthorized' })
    await stream.ended
  }

  it('signing out ends the stream at once', async (ctx) => {
    const { t, cookie, stream } = await liveStream(ctx)
    assert.equal((await asSession(t, cookie, 'POST', '/v1/auth/logout')).statusCode, 204)
    await assertEndedUnauthorized(stream)
  })

  it('a session revoked from another session ends its stream at once', async (ctx) => {
    const { t, cookie, stream } = await liveStream(ctx)
    const other = await signInUser(t)
    const id = (await asSession(t, cookie, 'GET', '/v1/user/sessions'))
      .json()
      .find((s: { current: boolean }) => s.current).id
    assert.equal((await asSession(t, other, 'DELETE', `/v1/user/sessions/${id}`)).statusCode, 204)
    await assertEndedUnauthorized(stream)
  })

  it('a session ended behind this instance (deleted in the database) ends its stream at the next check', async (ctx) => {
    const { t, stream } = await liveStream(ctx)
    await t.database.db.deleteFrom('sessions').execute()
    await assertEndedUnauthorized(stream)
  })

  it('a session that expires (idle for 14 days, by the clock) ends its stream at the next check', async (ctx) => {
    const { clock, stream } = await liveStream(ctx)
    clock.advance(SESSION_IDLE_MS)
    await assertEndedUnauthorized(stream)
  })
})
