import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createMailer } from '../../src/lib/mailer.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { INVITATION_MAIL_LIMITS } from '../../src/modules/statuses/invitations.service.ts'
import { createUser, setUser } from '../../src/modules/users/users.service.ts'
import { GOOD_PASSWORD, sessionCookieOf } from '../helpers/accounts.ts'
import { makeApp, TEST_PLANS, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { postgresOnly, TEST_ENGINE, testDatabase } from '../helpers/engine.ts'
import { createStatus } from '../helpers/sharing.ts'
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts'

// Invitation mails (docs/accounts.md#invitation-links, docs/security.md): a link bound to an
// e-mail address is accepted only by an account whose confirmed address it is (signing up
// through it proves the address only because it was mailed there), and at most 5 such mails
// an hour go to one address, 20 an hour from one inviter, on every instance.

const HOUR = 60 * 60 * 1000
const BOB = 'bob@example.com'

interface World {
  t: TestApp
  clock: TestClock
  smtp: TestSmtpServer | undefined
  owner: TestUser
  statusId: string
  /** The owner makes a link; the raw answer. */
  link(body: Record<string, unknown>, as?: TestUser): ReturnType<TestApp['request']>
}

async function world(
  ctx: Lifetime,
  {
    mail = true,
    databaseUrl,
    clock = testClock(),
    smtp: shared,
    statusName = 'Help desk',
  }: {
    mail?: boolean
    databaseUrl?: string
    clock?: TestClock
    smtp?: TestSmtpServer
    statusName?: string
  } = {},
): Promise<World> {
  const smtp = shared ?? (mail ? await startSmtpServer(ctx) : undefined)
  const t = await makeApp(ctx, {
    ...(databaseUrl !== undefined && { databaseUrl }),
    deps: {
      clock,
      signup: 'open',
      ...(smtp && { mailer: createMailer(smtp.url, 'statusd <statusd@example.com>') }),
    },
  })
  const owner = await withAddress(t, 'Olivia Owner', 'olivia@example.com')
  const status = await createStatus(t, owner, `desk-${owner.id}`, {
    value: 'ON',
    name: statusName,
  })
  return {
    t,
    clock,
    smtp,
    owner,
    statusId: status.id,
    link: (body, as = owner) => t.request(as, 'POST', `/v1/status/${status.id}/invitations`, body),
  }
}

/** A user the operator makes, with an address (vouched for: confirmed) and a key. */
async function withAddress(t: TestApp, name: string, email: string): Promise<TestUser> {
  const user = await createUser(t.database.db, TEST_PLANS, {
    name,
    email,
    plan: 'unlimited',
    verified: true,
  })
  return { id: user.id, key: (await createApiKey(t.database.db, user.id)).key }
}

const tokenOf = (res: { json(): { url: string } }) => res.json().url.split('/invite/')[1] as string

/** Signs up (SIGNUP=open) with a session; the answer and its cookie. */
async function signUp(t: TestApp, email: string, invitation?: string) {
  const res = await t.request(null, 'POST', '/v1/auth/signup', {
    email,
    name: 'Someone',
    password: GOOD_PASSWORD,
    ...(invitation !== undefined && { invitation }),
  })
  return { res, cookie: sessionCookieOf(res)?.value }
}

const withCookie = (
  t: TestApp,
  cookie: string,
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  body?: unknown,
) =>
  t.request(null, method, url, body, {
    cookie: `statusd_session=${cookie}`,
    ...(method !== 'GET' && { 'sec-fetch-site': 'same-origin' }),
  })

describe('A link bound to an e-mail address is accepted only by an account whose verified address is that one', () => {
  it('finding 9, as attacked without SMTP: no link can be bound to an address nothing can prove (400), so no account can take it by setting its address', async (ctx) => {
    const w = await world(ctx, { mail: false })
    const made = await w.link({ role: 'updater', email: BOB })
    // before the fix: 201, and another account that set its address to bob's accepted it
    assert.equal(made.statusCode, 400, made.body)
    assert.equal(made.json().errorCode, 'validationError')
    assert.equal(made.json().errors[0].field, 'email')
    assert.match(made.json().errors[0].message, /sends none \(SMTP_URL\)/)
  })

  it('without SMTP an e-mail change does not verify the address', async (ctx) => {
    const w = await world(ctx, { mail: false })
    const { cookie } = await signUp(w.t, 'mallory@example.com')
    const changed = await withCookie(w.t, cookie as string, 'PATCH', '/v1/user', { email: BOB })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.equal(changed.json().email, BOB)
    assert.equal(changed.json().emailVerified, false)
  })

  it('with SMTP an account that signed up with the address but has not confirmed it gets 403 emailNotVerified, and no role', async (ctx) => {
    const w = await world(ctx)
    const token = tokenOf(await w.link({ role: 'updater', email: BOB }))
    const { cookie } = await signUp(w.t, BOB)
    const accepted = await withCookie(
      w.t,
      cookie as string,
      'POST',
      `/v1/invitations/${token}/accept`,
    )
    // before the fix: 200, the role for whoever typed the address
    assert.equal(accepted.statusCode, 403, accepted.body)
    assert.equal(accepted.json().errorCode, 'emailNotVerified')
    const roles = await w.t.database.db
      .selectFrom('status_roles')
      .select('user_id')
      .where('status_id', '=', w.statusId)
      .execute()
    assert.deepEqual(roles, [])
  })

  it('another account (another address) gets 403 forbidden', async (ctx) => {
    const w = await world(ctx)
    const token = tokenOf(await w.link({ role: 'updater', email: BOB }))
    const carol = await withAddress(w.t, 'Carol', 'carol@example.com')
    const res = await w.t.request(carol, 'POST', `/v1/invitations/${token}/accept`)
    assert.equal(res.statusCode, 403)
    assert.equal(res.json().errorCode, 'forbidden')
  })

  it('finding 9, as attacked with SMTP: a sign-up through the mailed link with its address proves the address (emailVerified true) and gets the role', async (ctx) => {
    const w = await world(ctx)
    const token = tokenOf(await w.link({ role: 'updater', email: BOB }))
    const { res } = await signUp(w.t, 'Bob@Example.com', token)
    assert.equal(res.statusCode, 201, res.body)
    // before the fix: verified, with the role, and emailVerified false
    assert.equal(res.json().emailVerified, true)
    assert.equal(res.json().authLevel, 'verified')
  })

  it('an account whose address is confirmed (by its link, or by the operator) accepts it', async (ctx) => {
    const w = await world(ctx)
    const bob = await withAddress(w.t, 'Bob', 'BOB@example.com')
    const first = await w.t.request(
      bob,
      'POST',
      `/v1/invitations/${tokenOf(await w.link({ role: 'subscriber', email: BOB }))}/accept`,
    )
    assert.equal(first.statusCode, 200, first.body)
    // a sign-up not confirmed, which the operator then verifies (statusd user set --verified)
    const { res, cookie } = await signUp(w.t, 'dave@example.com')
    await setUser(w.t.database.db, TEST_PLANS, res.json().id, { verified: true })
    const token = tokenOf(await w.link({ role: 'subscriber', email: 'dave@example.com' }))
    const accepted = await withCookie(
      w.t,
      cookie as string,
      'POST',
      `/v1/invitations/${token}/accept`,
    )
    assert.equal(accepted.statusCode, 200, accepted.body)
  })
})

describe('Invitation mails: at most 5 an hour to one address and 20 an hour from one inviter', () => {
  it('finding 5, as attacked: the sixth link to one address within the hour is 429 rateLimited with Retry-After, no link is made, and 5 mails went', async (ctx) => {
    const w = await world(ctx, { statusName: 'URGENT: your bank account is locked' })
    const { perAddress } = INVITATION_MAIL_LIMITS
    for (let i = 0; i < perAddress; i++) {
      const made = await w.link({ role: 'subscriber', email: BOB })
      assert.equal(made.statusCode, 201, made.body)
      w.clock.advance(60_000)
    }
    const refused = await w.link({ role: 'subscriber', email: BOB })
    // before the fix: 201, and a sixth mail
    assert.equal(refused.statusCode, 429, refused.body)
    assert.equal(refused.json().errorCode, 'rateLimited')
    assert.match(refused.json().message, /to this address/)
    // the first mail leaves the hour 55 minutes from now
    assert.equal(refused.headers['retry-after'], String(55 * 60))
    const links = await w.t.request(w.owner, 'GET', `/v1/status/${w.statusId}/invitations`)
    assert.equal(links.json().length, perAddress, 'no link for the refused one')
    const smtp = w.smtp as TestSmtpServer
    const mails = []
    for (let i = 0; i < perAddress; i++) mails.push(await smtp.next())
    await w.t.close()
    assert.equal(smtp.messages().length, perAddress)
    // the status's name, chosen by the inviter, is not in the subject; the body says who asks
    for (const mail of mails) {
      assert.equal(mail.subject, 'An invitation to a status on statusd')
      assert.match(mail.text ?? '', /^Olivia Owner <olivia@example\.com>, a user of statusd at /)
    }
  })

  it('an hour after the first mail, one more may go; another address is not held back', async (ctx) => {
    const w = await world(ctx)
    const { perAddress } = INVITATION_MAIL_LIMITS
    for (let i = 0; i < perAddress; i++)
      assert.equal((await w.link({ role: 'subscriber', email: BOB })).statusCode, 201)
    assert.equal((await w.link({ role: 'subscriber', email: BOB })).statusCode, 429)
    assert.equal((await w.link({ role: 'subscriber', email: 'carol@example.com' })).statusCode, 201)
    assert.equal(
      (await w.link({ role: 'subscriber' })).statusCode,
      201,
      'a link without an address is not counted',
    )
    w.clock.advance(HOUR)
    assert.equal((await w.link({ role: 'subscriber', email: BOB })).statusCode, 201)
  })

  it('the per-address limit counts every inviter; the per-inviter limit counts every address', async (ctx) => {
    const w = await world(ctx)
    const { perAddress, perInviter } = INVITATION_MAIL_LIMITS
    // a second owner on the same service
    const second = await withAddress(w.t, 'Sam Second', 'sam@example.com')
    const theirs = await createStatus(w.t, second, 'theirs', { value: 'ON' })
    const fromSecond = (email: string) =>
      w.t.request(second, 'POST', `/v1/status/${theirs.id}/invitations`, {
        role: 'subscriber',
        email,
      })
    for (let i = 0; i < perAddress - 1; i++)
      assert.equal((await w.link({ role: 'subscriber', email: BOB })).statusCode, 201)
    assert.equal((await fromSecond(BOB)).statusCode, 201)
    assert.equal((await fromSecond(BOB)).statusCode, 429, 'bob had 5 this hour, from anyone')
    for (let i = 1; i < perInviter; i++)
      assert.equal((await fromSecond(`person${i}@example.com`)).statusCode, 201)
    const refused = await fromSecond('one-more@example.com')
    assert.equal(refused.statusCode, 429)
    assert.match(refused.json().message, /from you/)
  })

  it('at once, 12 links to one address: exactly 5 are made', async (ctx) => {
    const w = await world(ctx)
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => w.link({ role: 'subscriber', email: BOB })),
    )
    const codes = answers.map((r) => r.statusCode).sort()
    assert.deepEqual(codes, [...Array(5).fill(201), ...Array(7).fill(429)])
  })

  it(`at once, on two instances of one database, 12 links to one address: exactly 5 are made [${TEST_ENGINE}]`, {
    skip: postgresOnly,
  }, async (ctx) => {
    const database = await testDatabase(ctx)
    const clock = testClock()
    const a = await world(ctx, { databaseUrl: database.url, clock })
    const smtp = a.smtp as TestSmtpServer
    const b = await makeApp(ctx, {
      databaseUrl: database.url,
      deps: { clock, mailer: createMailer(smtp.url, 'statusd <statusd@example.com>') },
    })
    const url = `/v1/status/${a.statusId}/invitations`
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? a.t : b).request(a.owner, 'POST', url, { role: 'subscriber', email: BOB }),
      ),
    )
    const codes = answers.map((r) => r.statusCode).sort()
    assert.deepEqual(codes, [...Array(5).fill(201), ...Array(7).fill(429)])
  })
})
