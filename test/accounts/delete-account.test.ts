import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { createMailer } from '../../src/lib/mailer.ts'
import { STATUS_BATCH } from '../../src/modules/accounts/account-deletion.service.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { asSession, GOOD_PASSWORD, sessionCookieOf, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { grant } from '../helpers/sharing.ts'
import { startSmtpServer } from '../helpers/smtp.ts'
import { SseTestClient } from '../helpers/sse.ts'

// Deleting your own account (docs/accounts.md#delete-your-account): DELETE /v1/user, confirmed
// by the password or a fresh passkey assertion, from a signed-in session only; the account and
// everything it owns go, its address is free at once, the security log keeps the record.

const session = { cookie: 'statusd_session={session}', 'sec-fetch-site': 'same-origin' }

/** The kinds of the security events recorded about a user. */
async function kindsOf(t: TestApp, userId: string): Promise<string[]> {
  const rows = await t.database.db
    .selectFrom('security_events')
    .select('kind')
    .where('user_id', '=', userId)
    .execute()
  return rows.map((r) => r.kind)
}

const countOf = async (t: TestApp, table: 'statuses' | 'users' | 'api_keys', userId: string) => {
  const column = table === 'statuses' ? 'owner_id' : table === 'users' ? 'id' : 'user_id'
  const rows = await t.database.db
    .selectFrom(table)
    .select('id')
    .where(column, '=', userId)
    .execute()
  return rows.length
}

/**
 * Ada, signed up with a password (her session `session`, her key `ada`), owning a status Bob
 * follows; Otto, the one operator, signed in too (`otto`).
 */
async function world(lifetime: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(lifetime, { deps: { signup: 'open' } })
  const otto = await signUpUser(t, { email: 'otto@example.com', name: 'Otto' })
  await t.database.db.updateTable('users').set({ admin: 1 }).where('id', '=', otto.id).execute()
  const ada = await signUpUser(t, { email: 'ada@example.com', name: 'Ada' })
  const { key } = await createApiKey(t.database.db, ada.id)
  const bob = await t.user({ name: 'Bob' })
  const made = await t.request({ id: ada.id, key }, 'POST', '/v1/status-keys/desk', { value: 'in' })
  assert.equal(made.statusCode, 201, made.body)
  await grant(t, { id: ada.id, key }, made.json().id, bob, 'subscriber')
  return {
    t,
    users: { ada: { id: ada.id, key }, bob },
    vars: { ada: ada.id, session: ada.cookie, otto: otto.cookie, status: made.json().id },
  }
}

/** Nothing of Ada's went: a refused request changed nothing. */
async function adaIntact(ctx: ScenarioContext) {
  const ada = ctx.vars.ada as string
  assert.equal(await countOf(ctx.t, 'users', ada), 1)
  assert.equal(await countOf(ctx.t, 'statuses', ada), 1)
  assert.equal(await countOf(ctx.t, 'api_keys', ada), 1)
  const me = await asSession(ctx.t, ctx.vars.session as string, 'GET', '/v1/user')
  assert.equal(me.statusCode, 200, 'her session still works')
}

runScenarios('DELETE /v1/user (docs/accounts.md#delete-your-account)', world, [
  {
    name: 'with the right password, the account and everything it owns go, and the address is free at once',
    as: null,
    method: 'DELETE',
    url: '/v1/user',
    body: { password: GOOD_PASSWORD },
    headers: session,
    expectStatus: 204,
    async expect(_body, ctx, res) {
      const { t } = ctx
      const ada = ctx.vars.ada as string
      assert.equal(sessionCookieOf(res)?.value, '', 'the session cookie is cleared')
      assert.equal(await countOf(t, 'users', ada), 0)
      assert.equal(await countOf(t, 'statuses', ada), 0)
      assert.equal(await countOf(t, 'api_keys', ada), 0)
      const me = await asSession(t, ctx.vars.session as string, 'GET', '/v1/user')
      assert.equal(me.statusCode, 401, 'the session ended')
      const byKey = await t.request(ctx.users.ada ?? null, 'GET', '/v1/checkAuth')
      assert.equal(byKey.statusCode, 401, 'the key is gone')
      const bobs = await t.request(ctx.users.bob ?? null, 'GET', `/v1/status/${ctx.vars.status}`)
      assert.equal(bobs.statusCode, 404, 'the status Bob followed is gone')
      // the security log keeps the record, with who the account was
      const [record] = await t.database.db
        .selectFrom('security_events')
        .selectAll()
        .where('user_id', '=', ada)
        .where('kind', '=', 'accountDeleted')
        .execute()
      assert.ok(record, 'the deletion is recorded')
      assert.equal(record.actor_id, ada)
      assert.deepEqual(JSON.parse(record.detail ?? ''), {
        name: 'Ada',
        email: 'ada@example.com',
        statuses: 1,
      })
      const signIn = await t.request(null, 'POST', '/v1/auth/login', {
        email: 'ada@example.com',
        password: GOOD_PASSWORD,
      })
      assert.equal(signIn.statusCode, 401, 'the old password signs no one in')
      const again = await t.request(null, 'POST', '/v1/auth/signup', {
        email: 'ada@example.com',
        name: 'Ada again',
        password: GOOD_PASSWORD,
      })
      assert.equal(again.statusCode, 201, again.body)
    },
  },
  {
    name: 'a wrong password is 403 and changes nothing',
    as: null,
    method: 'DELETE',
    url: '/v1/user',
    body: { password: 'not my password at all' },
    headers: session,
    expectStatus: 403,
    expectErrorCode: 'forbidden',
    async expect(body, ctx) {
      assert.equal(body.errors[0].field, 'password')
      await adaIntact(ctx)
      assert.ok((await kindsOf(ctx.t, ctx.vars.ada as string)).includes('signInFailed'))
    },
  },
  {
    name: 'an API key is 403, even with the right password, and changes nothing',
    as: 'ada',
    method: 'DELETE',
    url: '/v1/user',
    body: { password: GOOD_PASSWORD },
    expectStatus: 403,
    expectErrorCode: 'forbidden',
    expect: (_body, ctx) => adaIntact(ctx),
  },
  {
    name: 'no body is 400 and changes nothing',
    as: null,
    method: 'DELETE',
    url: '/v1/user',
    headers: session,
    expectStatus: 400,
    expect: (_body, ctx) => adaIntact(ctx),
  },
  {
    name: 'an empty body is 400 and changes nothing',
    as: null,
    method: 'DELETE',
    url: '/v1/user',
    body: {},
    headers: session,
    expectStatus: 400,
    expectErrorCode: 'emptyBody',
    expect: (_body, ctx) => adaIntact(ctx),
  },
  {
    name: 'a password and a passkey at once is 400 and changes nothing',
    as: null,
    method: 'DELETE',
    url: '/v1/user',
    body: {
      password: GOOD_PASSWORD,
      passkey: { challengeId: 'x', response: { id: 'x', rawId: 'x', type: 'public-key' } },
    },
    headers: session,
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: (_body, ctx) => adaIntact(ctx),
  },
  {
    name: 'a passkey answer that does not verify is 403 and changes nothing',
    as: null,
    method: 'DELETE',
    url: '/v1/user',
    body: {
      passkey: {
        challengeId: 'no-such-challenge',
        response: {
          id: 'k3Vd0Zp8QmXn4LwR7tYb2A',
          rawId: 'k3Vd0Zp8QmXn4LwR7tYb2A',
          type: 'public-key',
          clientExtensionResults: {},
          response: {
            clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0',
            authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ',
            signature: 'MEUCIQDx2v7Kp9yq5wZ3',
          },
        },
      },
    },
    headers: session,
    expectStatus: 403,
    expectErrorCode: 'forbidden',
    async expect(body, ctx) {
      assert.equal(body.errors[0].field, 'passkey')
      await adaIntact(ctx)
    },
  },
  {
    name: 'the last enabled operator cannot delete themself (409), and nothing changes',
    as: null,
    method: 'DELETE',
    url: '/v1/user',
    body: { password: GOOD_PASSWORD },
    headers: { ...session, cookie: 'statusd_session={otto}' },
    expectStatus: 409,
    expectErrorCode: 'conflict',
    async expect(_body, ctx) {
      const me = await asSession(ctx.t, ctx.vars.otto as string, 'GET', '/v1/user')
      assert.equal(me.statusCode, 200)
      assert.equal(me.json().admin, true)
    },
  },
])

describe('deleting an account, over real sockets', () => {
  it('ends the streams opened with its session and those on its statuses', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const ada = await signUpUser(t, { email: 'ada@example.com', name: 'Ada' })
    const adaKey = await createApiKey(t.database.db, ada.id)
    const asAda = { id: ada.id, key: adaKey.key }
    const bob = await t.user({ name: 'Bob' })
    // Ada owns "desk", which Bob follows; Bob owns "door", which Ada follows
    const desk = await t.request(asAda, 'POST', '/v1/status-keys/desk', { value: 'in' })
    assert.equal(desk.statusCode, 201, desk.body)
    await grant(t, asAda, desk.json().id, bob, 'subscriber')
    const door = await t.request(bob, 'POST', '/v1/status-keys/door', { value: 'open' })
    assert.equal(door.statusCode, 201, door.body)
    await grant(t, bob, door.json().id, asAda, 'subscriber')

    const withSession = await SseTestClient.connect(`${base}/v1/status/${door.json().id}/events`, {
      cookie: `statusd_session=${ada.cookie}`,
    })
    ctx.after(() => withSession.close())
    const onHerStatus = await SseTestClient.connect(`${base}/v1/status/${desk.json().id}/events`, {
      'service-api-key': bob.key,
    })
    ctx.after(() => onHerStatus.close())
    for (const stream of [withSession, onHerStatus]) {
      assert.equal(stream.response.statusCode, 200)
      assert.equal((await stream.nextEvent()).event, 'status')
    }

    const res = await fetch(`${base}/v1/user`, {
      method: 'DELETE',
      headers: {
        cookie: `statusd_session=${ada.cookie}`,
        'content-type': 'application/json',
        origin: base,
      },
      body: JSON.stringify({ password: GOOD_PASSWORD }),
    })
    assert.equal(res.status, 204, await res.text())

    const gone = await onHerStatus.nextEvent()
    assert.equal(gone.event, 'unavailable')
    assert.deepEqual(JSON.parse(gone.data), { reason: 'deleted' })
    await onHerStatus.ended
    // the session's stream on Bob's status ends: its credential is gone
    await withSession.ended
    const bobsDoor = await t.request(bob, 'GET', `/v1/status/${door.json().id}`)
    assert.equal(bobsDoor.statusCode, 200, "Bob's own status stays")
  })

  it('an account with more statuses than one transaction deletes loses every one', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const ada = await signUpUser(t, { email: 'ada@example.com', name: 'Ada' })
    await t.database.db
      .updateTable('users')
      .set({ plan: 'unlimited' })
      .where('id', '=', ada.id)
      .execute()
    const { key } = await createApiKey(t.database.db, ada.id)
    const count = STATUS_BATCH * 2 + 3
    for (let i = 0; i < count; i++) {
      // each with a stored response (Idempotency-Key), which goes with the account too
      const made = await t.request(
        { id: ada.id, key },
        'POST',
        `/v1/status-keys/s-${i}`,
        { value: 'in' },
        { 'idempotency-key': `make-${i}` },
      )
      assert.equal(made.statusCode, 201, made.body)
    }
    const res = await asSession(t, ada.cookie, 'DELETE', '/v1/user', { password: GOOD_PASSWORD })
    assert.equal(res.statusCode, 204, res.body)
    assert.equal(await countOf(t, 'statuses', ada.id), 0)
    const stored = await t.database.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('user_id', '=', ada.id)
      .execute()
    assert.equal(stored.length, 0)
    const deletions = await t.database.db
      .selectFrom('status_deletions')
      .select('status_id')
      .execute()
    // each is swept once its history is gone; the sweep may have finished some already
    assert.ok(deletions.length <= count)
    const [record] = await t.database.db
      .selectFrom('security_events')
      .select('detail')
      .where('kind', '=', 'accountDeleted')
      .execute()
    assert.equal(JSON.parse(record?.detail ?? '{}').statuses, count)
  })

  it('sends a goodbye mail to the address, at the real SMTP server', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const t = await makeApp(ctx, {
      deps: {
        signup: 'open',
        mailer: createMailer(smtp.url, 'statusd <statusd@status.example.com>'),
      },
    })
    const ada = await signUpUser(t, { email: 'ada@example.com', name: 'Ada' })
    // sign-up mailed a verification link first
    const verification = await smtp.next()
    assert.match(verification.subject ?? '', /confirm/i)
    const res = await asSession(t, ada.cookie, 'DELETE', '/v1/user', { password: GOOD_PASSWORD })
    assert.equal(res.statusCode, 204, res.body)
    const goodbye = await smtp.next()
    assert.equal(goodbye.to && 'text' in goodbye.to ? goodbye.to.text : '', 'ada@example.com')
    assert.match(goodbye.subject ?? '', /deleted/i)
    assert.match(goodbye.text ?? '', /Hello Ada/)
    assert.match(goodbye.text ?? '', /ada@example\.com is free again/)
  })

  it("the goodbye mail is in the account's language", async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const t = await makeApp(ctx, {
      deps: { mailer: createMailer(smtp.url, 'statusd <statusd@status.example.com>') },
    })
    t.app.accountMail.sendGoodbye({ name: 'Ada', email: 'ada@example.com', locale: 'de' })
    const goodbye = await smtp.next()
    assert.equal(goodbye.subject, 'Dein statusd-Konto ist gelöscht')
    assert.match(goodbye.text ?? '', /^Hallo Ada,/)
    assert.match(goodbye.text ?? '', /ada@example\.com ist wieder frei/)
  })
})
