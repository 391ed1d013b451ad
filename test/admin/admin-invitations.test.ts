import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { createMailer } from '../../src/lib/mailer.ts'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { linkIn, startSmtpServer } from '../helpers/smtp.ts'
import { SseTestClient } from '../helpers/sse.ts'
import { makeOperator, makePerson } from './operators.ts'

// Invitations by an operator and the instance page (docs/api.md#operators,
// docs/operations.md#operators).

async function world(lifetime: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(lifetime)
  const owner = await makeOperator(t)
  const ada = await makePerson(t, { name: 'Ada', email: 'ada@example.com' })
  return { t, users: { owner, ada }, vars: {} }
}

const tokenOf = (url: string) => String(url).split('/auth/link/')[1] as string

runScenarios('POST /v1/admin/invitations without SMTP (docs/api.md#operators)', world, [
  {
    name: 'the account is made at once, and the sign-in link is in the answer to hand over',
    method: 'POST',
    url: '/v1/admin/invitations',
    body: { email: 'Grace@Example.com', name: 'Grace' },
    expectStatus: 201,
    async expect(body, ctx, res) {
      assert.equal(body.mailed, false)
      assert.equal(typeof body.url, 'string')
      assert.equal(res.headers.location, `/v1/admin/users/${body.user.id}`)
      assert.equal(body.user.name, 'Grace')
      assert.equal(body.user.email, 'Grace@Example.com')
      assert.equal(body.user.authLevel, 'verified')
      assert.equal(body.user.emailVerified, true, 'the operator vouches for the address')
      assert.equal(body.user.plan, 'free')
      const signedIn = await ctx.t.request(null, 'POST', '/v1/auth/link', {
        token: tokenOf(body.url),
      })
      assert.equal(signedIn.statusCode, 200, signedIn.body)
      assert.equal(signedIn.json().id, body.user.id)
      assert.equal(signedIn.json().hasPassword, false)
      const events = await ctx.t.database.db
        .selectFrom('security_events')
        .select(['kind', 'actor_id'])
        .where('user_id', '=', body.user.id)
        .where('kind', 'like', 'admin.%')
        .execute()
      assert.deepEqual(events, [{ kind: 'admin.userInvited', actor_id: ctx.users.owner?.id }])
    },
  },
  {
    name: 'without a name, the part of the address before the @ is the name; a plan may be given',
    method: 'POST',
    url: '/v1/admin/invitations',
    body: { email: 'linus@example.org', plan: 'pro' },
    expectStatus: 201,
    expect(body) {
      assert.equal(body.user.name, 'linus')
      assert.equal(body.user.plan, 'pro')
    },
  },
  {
    name: 'an address an account has (in any case) is 409',
    method: 'POST',
    url: '/v1/admin/invitations',
    body: { email: 'ADA@example.com' },
    expectStatus: 409,
    expectErrorCode: 'conflict',
  },
  {
    name: 'something that is not an address is 400 and makes no account',
    method: 'POST',
    url: '/v1/admin/invitations',
    body: { email: 'not an address' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    async expect(_body, ctx) {
      const users = await ctx.t.request(ctx.users.owner ?? null, 'GET', '/v1/admin/users')
      assert.equal(users.json().length, 2)
    },
  },
  {
    name: 'an unknown plan is 400',
    method: 'POST',
    url: '/v1/admin/invitations',
    body: { email: 'x@example.org', plan: 'platinum' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'someone who is not an operator gets 403',
    as: 'ada',
    method: 'POST',
    url: '/v1/admin/invitations',
    body: { email: 'x@example.org' },
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
])

describe('POST /v1/admin/invitations with SMTP (docs/api.md#operators)', () => {
  it('mails the sign-in link to the address, and the answer does not hold it', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const t = await makeApp(ctx, {
      deps: { mailer: createMailer(smtp.url, 'statusd <statusd@status.example.com>') },
    })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const owner = await makeOperator(t, { name: 'Olga' })
    const res = await t.request(owner, 'POST', '/v1/admin/invitations', {
      email: 'grace@example.com',
    })
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().mailed, true)
    assert.equal(res.json().url, null)
    const mail = await smtp.next()
    assert.equal(mail.subject, "You're invited to statusd")
    assert.match(mail.text ?? '', /Olga made you an account/)
    const link = linkIn(mail, `${base}/auth/link/`)
    const signedIn = await t.request(null, 'POST', '/v1/auth/link', { token: tokenOf(link) })
    assert.equal(signedIn.statusCode, 200, signedIn.body)
    assert.equal(signedIn.json().email, 'grace@example.com')
    assert.equal(signedIn.json().emailVerified, true)
  })
})

describe('GET /v1/admin/instance (docs/api.md#operators)', () => {
  it('tells the version, engine, size, configuration, backlog and open streams', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const owner = await makeOperator(t)
    const made = await t.request(owner, 'POST', '/v1/status-keys/desk', { value: 'in' })
    assert.equal(made.statusCode, 201, made.body)
    const stream = await SseTestClient.connect(`${base}/v1/status/${made.json().id}/events`, {
      'service-api-key': owner.key,
    })
    ctx.after(() => stream.close())
    assert.equal(stream.status, 200)
    assert.equal((await stream.nextEvent()).event, 'status')

    const res = await t.request(owner, 'GET', '/v1/admin/instance')
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    assert.equal(body.engine, t.database.engine)
    assert.match(body.version, /^\d+\.\d+\.\d+/)
    assert.ok(body.databaseBytes > 0, res.body)
    assert.equal(body.signup, 'open')
    assert.equal(body.smtp, false)
    assert.equal(body.push, true, 'the push key pair is made at start')
    assert.equal(body.mqtt, false)
    assert.equal(body.outboxBacklog, 0)
    assert.equal(body.openStreams, 1)
    assert.equal(body.users, 1)
    assert.ok(body.uptimeSeconds >= 0)

    const ada = await makePerson(t, { name: 'Ada', email: 'ada@example.com' })
    const refused = await t.request(ada, 'GET', '/v1/admin/instance')
    assert.equal(refused.statusCode, 403, refused.body)
  })
})
