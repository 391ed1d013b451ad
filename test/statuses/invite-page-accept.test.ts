import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { asSession, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'

// The invitation page's Accept button (docs/accounts.md#invitation-links): the signed-in
// person's own form post, `POST /invite/:token`. A request a browser says comes from another
// site is refused and grants nothing (no one accepts an invitation for you from their page);
// the page is never framed; signed out, nothing is accepted.

async function world(ctx: Lifetime) {
  const t = await makeApp(ctx, { deps: { signup: 'open' } })
  const owner = await signUpUser(t, { email: 'olivia@example.com', name: 'Olivia' })
  const sam = await signUpUser(t, { email: 'sam@example.com', name: 'Sam' })
  const made = await asSession(t, owner.cookie, 'POST', '/v1/status-keys/room-4', {
    name: 'Room 4',
    value: 'FREE',
  })
  assert.equal(made.statusCode, 201, made.body)
  const link = await asSession(
    t,
    owner.cookie,
    'POST',
    `/v1/status/${made.json().id}/invitations`,
    {
      role: 'updater',
    },
  )
  assert.equal(link.statusCode, 201, link.body)
  const path = new URL(link.json().url).pathname
  return { t, sam, statusId: made.json().id as string, path }
}

const rolesOf = async (t: TestApp, cookie: string) =>
  ((await asSession(t, cookie, 'GET', '/v1/user/subscriptions')).json() as { role: string }[]).map(
    (s) => s.role,
  )

describe('the invitation page accepts only for the signed-in person, from its own page', () => {
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
  const cases = [
    {
      rule: 'from the page itself (Sec-Fetch-Site: same-origin): accepted, 303 to the status',
      headers: { 'sec-fetch-site': 'same-origin' },
      status: 303,
      roles: ['updater'],
    },
    {
      rule: 'from another site (Sec-Fetch-Site: cross-site): 403, no role',
      headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      status: 403,
      roles: [],
    },
    {
      rule: 'from another origin (Origin only): 403, no role',
      headers: { origin: 'https://evil.example' },
      status: 403,
      roles: [],
    },
  ]
  for (const c of cases)
    it(c.rule, async (ctx) => {
      const { t, sam, statusId, path } = await world(ctx)
      const res = await t.request(null, 'POST', path, 'answer=accept', {
        cookie: `statusd_session=${sam.cookie}`,
        ...FORM,
        ...c.headers,
      })
      assert.equal(res.statusCode, c.status, res.body)
      if (c.status === 303) assert.equal(res.headers.location, `/statuses/${statusId}`)
      else assert.match(String(res.headers['content-type']), /^text\/html/)
      assert.deepEqual(await rolesOf(t, sam.cookie), c.roles)
    })

  it('signed out, the post accepts nothing (401 page); the page says to sign in and is never framed', async (ctx) => {
    const { t, path } = await world(ctx)
    const res = await t.request(null, 'POST', path, 'answer=accept', {
      ...FORM,
      'sec-fetch-site': 'same-origin',
    })
    assert.equal(res.statusCode, 401)
    assert.match(res.body, /Sign in again/)
    const page = await t.request(null, 'GET', path)
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /Sign in to accept/)
    assert.doesNotMatch(page.body, /<form/)
    const csp = String(page.headers['content-security-policy'])
    assert.match(csp, /frame-ancestors 'none'/)
    assert.match(csp, /form-action 'self'/)
  })
})
