import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { it } from 'node:test'
import { SESSION_IDLE_MS } from '../../src/modules/users/sessions.service.ts'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { makeApp } from '../helpers/app.ts'
import { testClock } from '../helpers/clock.ts'
import { CookieJar } from '../helpers/cookie-jar.ts'
import type { Json } from '../helpers/processes.ts'

// docs/accounts.md#sessions over a real socket: a cookie jar carries the session from sign-up
// to sign-out, as a browser would.

it('a cookie jar over a real socket: sign-up, profile, sign-in elsewhere, listing, revocation, sign-out, expiry', async (ctx) => {
  const clock = testClock()
  const t = await makeApp(ctx, { deps: { signup: 'open', clock } })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  const laptop = new CookieJar()
  const phone = new CookieJar()

  const signup = await laptop.fetch(base, '/v1/auth/signup', {
    method: 'POST',
    json: { email: 'ada@example.com', name: 'Ada', password: GOOD_PASSWORD },
  })
  assert.equal(signup.status, 201)
  assert.ok(laptop.get('statusd_session'))

  const profile = await laptop.fetch(base, '/v1/user')
  assert.equal(profile.status, 200)
  assert.equal(((await profile.json()) as Json).email, 'ada@example.com')

  const signin = await phone.fetch(base, '/v1/auth/login', {
    method: 'POST',
    json: { email: 'ada@example.com', password: GOOD_PASSWORD },
  })
  assert.equal(signin.status, 200)
  assert.notEqual(phone.get('statusd_session'), laptop.get('statusd_session'))

  const listed: Json = await (await laptop.fetch(base, '/v1/user/sessions')).json()
  assert.equal(listed.length, 2)
  const phoneSession = listed.find((s: { current: boolean }) => !s.current)
  assert.equal(phoneSession.method, 'password')

  // the laptop signs the phone out
  const revoked = await laptop.fetch(base, `/v1/user/sessions/${phoneSession.id}`, {
    method: 'DELETE',
  })
  assert.equal(revoked.status, 204)
  assert.equal((await phone.fetch(base, '/v1/user')).status, 401)

  // renaming works from the laptop's own origin
  const renamed = await laptop.fetch(base, '/v1/user', {
    method: 'PATCH',
    json: { name: 'Ada L.' },
  })
  assert.equal(renamed.status, 200)

  const out = await laptop.fetch(base, '/v1/auth/logout', { method: 'POST' })
  assert.equal(out.status, 204)
  assert.equal(laptop.get('statusd_session'), undefined, 'the cookie is cleared')

  // a fresh sign-in, left unused for 14 days, has ended
  await laptop.fetch(base, '/v1/auth/login', {
    method: 'POST',
    json: { email: 'ada@example.com', password: GOOD_PASSWORD },
  })
  assert.equal((await laptop.fetch(base, '/v1/user')).status, 200)
  clock.advance(SESSION_IDLE_MS)
  const expired = await laptop.fetch(base, '/v1/user')
  assert.equal(expired.status, 401)
  assert.equal(((await expired.json()) as Json).errorCode, 'unauthorized')
})
