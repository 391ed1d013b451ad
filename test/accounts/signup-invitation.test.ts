import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createMailer } from '../../src/lib/mailer.ts'
import { asSession, GOOD_PASSWORD, sessionCookieOf, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { createStatus } from '../helpers/sharing.ts'
import { startSmtpServer } from '../helpers/smtp.ts'

// Sign-up through an invitation link (docs/accounts.md#signing-up,
// docs/accounts.md#invitation-links): with SIGNUP=invite a link is the way in; the account is
// verified at once and gets the link's role, in one transaction.

const DAY_MS = 24 * 60 * 60 * 1000
const START = Date.parse('2030-06-01T12:00:00.000Z')

interface World {
  t: TestApp
  clock: TestClock
  owner: TestUser
  statusId: string
  link(body?: Record<string, unknown>): Promise<{ id: string; token: string }>
}

async function world(
  ctx: Lifetime,
  signup: 'invite' | 'open' = 'invite',
  { mail = false }: { mail?: boolean } = {},
): Promise<World> {
  const clock = testClock(START)
  // a link bound to an address needs e-mail: it is mailed there (docs/accounts.md#invitation-links)
  const smtp = mail ? await startSmtpServer(ctx) : undefined
  const t = await makeApp(ctx, {
    deps: {
      clock,
      signup,
      ...(smtp && { mailer: createMailer(smtp.url, 'statusd <s@example.com>') }),
    },
  })
  const owner = await t.user({ name: 'Olivia Owner' })
  const status = await createStatus(t, owner, 'desk', { value: 'ON', name: 'Help desk' })
  return {
    t,
    clock,
    owner,
    statusId: status.id,
    async link(body = { role: 'updater' }) {
      const res = await t.request(owner, 'POST', `/v1/status/${status.id}/invitations`, body)
      assert.equal(res.statusCode, 201, res.body)
      return { id: res.json().id, token: (res.json().url as string).split('/invite/')[1] as string }
    },
  }
}

const signUp = (w: World, body: Record<string, unknown>) =>
  w.t.request(null, 'POST', '/v1/auth/signup', {
    email: 'sam@example.com',
    name: 'Sam',
    password: GOOD_PASSWORD,
    ...body,
  })

const userCount = async (w: World) =>
  Number(
    (
      await w.t.database.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

describe('sign-up through an invitation link (SIGNUP=invite)', () => {
  it('with a link: 201, signed in, verified at once, and the role is theirs', async (ctx) => {
    const w = await world(ctx)
    const { token } = await w.link()
    const res = await signUp(w, { invitation: token })
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().authLevel, 'verified', 'the inviter vouches')
    const cookie = sessionCookieOf(res)
    assert.ok(cookie)
    const read = await asSession(w.t, cookie.value, 'GET', `/v1/status/${w.statusId}`)
    assert.equal(read.statusCode, 200, read.body)
    const patch = await asSession(w.t, cookie.value, 'PATCH', `/v1/status/${w.statusId}`, {
      value: 'BUSY',
    })
    assert.equal(patch.statusCode, 200, 'an updater')
    const list = await w.t.request(w.owner, 'GET', `/v1/status/${w.statusId}/invitations`)
    assert.equal(list.json()[0].usesLeft, 0, 'the use is spent')
  })

  it('without a link: 403 forbidden, no account', async (ctx) => {
    const w = await world(ctx)
    const before = await userCount(w)
    const res = await signUp(w, {})
    assert.equal(res.statusCode, 403)
    assert.equal(res.json().errorCode, 'forbidden')
    assert.equal(await userCount(w), before)
  })

  const refusals: {
    name: string
    spoil: (w: World) => Promise<string>
    status: number
    errorCode: string
  }[] = [
    {
      name: 'a forged token → 404',
      spoil: async () => `sdi_${'F'.repeat(43)}`,
      status: 404,
      errorCode: 'notFound',
    },
    {
      name: 'an expired link → 410',
      spoil: async (w) => {
        const { token } = await w.link()
        w.clock.advance(7 * DAY_MS)
        return token
      },
      status: 410,
      errorCode: 'gone',
    },
    {
      name: 'a used-up link → 410',
      spoil: async (w) => {
        const { token } = await w.link()
        assert.equal(
          (await signUp(w, { invitation: token, email: 'first@example.com' })).statusCode,
          201,
        )
        return token
      },
      status: 410,
      errorCode: 'gone',
    },
    {
      name: 'a revoked link → 410',
      spoil: async (w) => {
        const { id, token } = await w.link()
        await w.t.request(w.owner, 'DELETE', `/v1/status/${w.statusId}/invitations/${id}`)
        return token
      },
      status: 410,
      errorCode: 'gone',
    },
    {
      name: 'a link bound to another e-mail address → 403',
      spoil: async (w) =>
        (await w.link({ role: 'subscriber', email: 'someone@example.com' })).token,
      status: 403,
      errorCode: 'forbidden',
    },
  ]
  for (const r of refusals)
    it(`${r.name}, and no account is created`, async (ctx) => {
      const w = await world(ctx, 'invite', { mail: true })
      const token = await r.spoil(w)
      const before = await userCount(w)
      const res = await signUp(w, { invitation: token })
      assert.equal(res.statusCode, r.status, res.body)
      assert.equal(res.json().errorCode, r.errorCode)
      assert.equal(sessionCookieOf(res), undefined, 'not signed in')
      assert.equal(await userCount(w), before, 'no account')
      const again = await w.t.request(null, 'POST', '/v1/auth/login', {
        email: 'sam@example.com',
        password: GOOD_PASSWORD,
      })
      assert.equal(again.statusCode, 401)
    })

  it('a link bound to the address works (case-insensitive), and proves the address it was mailed to', async (ctx) => {
    const w = await world(ctx, 'invite', { mail: true })
    const { token } = await w.link({ role: 'subscriber', email: 'SAM@example.com' })
    const res = await signUp(w, { invitation: token, email: 'Sam@Example.com' })
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().authLevel, 'verified')
    assert.equal(res.json().emailVerified, true, 'the link reached the mailbox')
  })

  it('a taken e-mail address → 409, and the link keeps its use', async (ctx) => {
    const w = await world(ctx)
    const { token } = await w.link()
    assert.equal((await signUp(w, { invitation: (await w.link()).token })).statusCode, 201)
    const res = await signUp(w, { invitation: token })
    assert.equal(res.statusCode, 409)
    const preview = await w.t.request(null, 'GET', `/v1/invitations/${token}`)
    assert.equal(preview.statusCode, 200, 'still usable')
  })

  it('a malformed invitation → 400 validationError', async (ctx) => {
    const w = await world(ctx)
    const res = await signUp(w, { invitation: 42 })
    assert.equal(res.statusCode, 400)
    assert.equal(res.json().errorCode, 'validationError')
  })

  it('with SIGNUP=open a link works too, and the account is verified even when mail would verify it', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const clock = testClock(START)
    const t = await makeApp(ctx, {
      deps: { clock, signup: 'open', mailer: createMailer(smtp.url, 'statusd <s@example.com>') },
    })
    const owner = await t.user({ name: 'Olivia Owner' })
    const status = await createStatus(t, owner, 'desk', { value: 'ON' })
    const made = await t.request(owner, 'POST', `/v1/status/${status.id}/invitations`, {
      role: 'subscriber',
    })
    const token = (made.json().url as string).split('/invite/')[1] as string
    const res = await t.request(null, 'POST', '/v1/auth/signup', {
      email: 'sam@example.com',
      name: 'Sam',
      password: GOOD_PASSWORD,
      invitation: token,
    })
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().authLevel, 'verified')
  })
})

describe('accepting with a session (a browser)', () => {
  it('a signed-in person accepts a link with their session cookie; from another site it is refused', async (ctx) => {
    const w = await world(ctx, 'open')
    const { token } = await w.link({ role: 'subscriber' })
    const { cookie } = await signUpUser(w.t, { email: 'sam@example.com', name: 'Sam' })
    const url = `/v1/invitations/${token}/accept`
    const crossSite = await asSession(w.t, cookie, 'POST', url, undefined, {
      'sec-fetch-site': 'cross-site',
    })
    assert.equal(crossSite.statusCode, 403)
    assert.equal(crossSite.json().errorCode, 'csrfRejected')
    const res = await asSession(w.t, cookie, 'POST', url)
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().role, 'subscriber')
    const mine = await asSession(w.t, cookie, 'GET', `/v1/status/${w.statusId}`)
    assert.equal(mine.statusCode, 200)
  })
})
