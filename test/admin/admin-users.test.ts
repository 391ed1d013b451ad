import assert from 'node:assert/strict'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { issueAuthToken } from '../../src/modules/users/auth-tokens.service.ts'
import { GOOD_PASSWORD, sessionCookieOf, signUpUser } from '../helpers/accounts.ts'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runReadOnlyScenarios, runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'
import { makeOperator, makePerson } from './operators.ts'

// The operators' API on users (docs/api.md#operators, docs/operations.md#operators): only an
// operator may call it; what they change is recorded in the security log; the last enabled
// operator stays one.

/** The kinds of security events recorded about a user, oldest first. */
async function eventsOf(ctx: ScenarioContext, userId: string) {
  const rows = await ctx.t.database.db
    .selectFrom('security_events')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('at')
    .orderBy('id')
    .execute()
  return rows
}

/**
 * An operator (`owner`), their key without the scope `admin` (`narrow`), a person who is not
 * one (`ada`, signed up with a password, owning a status), and Bob.
 */
async function world(lifetime: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(lifetime, { deps: { signup: 'open' } })
  const owner = await makeOperator(t, { name: 'Olga', email: 'olga@example.com' })
  const narrow = await createApiKey(t.database.db, owner.id, { scopes: ['status:read'] })
  const { id: adaId } = await signUpUser(t, { email: 'ada@example.com', name: 'Ada' })
  const { key: adaKey } = await createApiKey(t.database.db, adaId)
  const ada = { id: adaId, key: adaKey }
  const made = await t.request(ada, 'POST', '/v1/status-keys/desk', { value: 'in' })
  assert.equal(made.statusCode, 201, made.body)
  const bob = await makePerson(t, { name: 'Bob Stone', email: 'bob@example.org' })
  return {
    t,
    users: { owner, narrow: { id: owner.id, key: narrow.key }, ada, bob },
    vars: { owner: owner.id, ada: adaId, bob: bob.id, status: made.json().id },
  }
}

runReadOnlyScenarios('GET /v1/admin/users (docs/api.md#operators)', world, [
  {
    name: 'an operator lists every user, oldest first, with what the list shows',
    method: 'GET',
    url: '/v1/admin/users',
    expectStatus: 200,
    expect(body, ctx) {
      assert.deepEqual(
        body.map((u: { name: string }) => u.name),
        ['Olga', 'Ada', 'Bob Stone'],
      )
      const ada = body[1]
      assert.deepEqual(Object.keys(ada).sort(), [
        'admin',
        'authLevel',
        'createdAt',
        'disabled',
        'disabledAt',
        'email',
        'emailVerified',
        'id',
        'lastSignInAt',
        'name',
        'plan',
        'statusCount',
      ])
      assert.equal(ada.id, ctx.vars.ada)
      assert.equal(ada.statusCount, 1)
      assert.equal(ada.admin, false)
      assert.equal(ada.disabled, false)
      assert.equal(typeof ada.lastSignInAt, 'string', 'sign-up began a session')
      assert.equal(body[0].admin, true)
      assert.equal(body[2].lastSignInAt, null, 'Bob never signed in')
    },
  },
  {
    name: 'q finds users by a part of the name, in any case',
    method: 'GET',
    url: '/v1/admin/users?q=STONE',
    expectStatus: 200,
    expect(body) {
      assert.deepEqual(
        body.map((u: { name: string }) => u.name),
        ['Bob Stone'],
      )
    },
  },
  {
    name: 'q finds users by a part of the e-mail address',
    method: 'GET',
    url: '/v1/admin/users?q=example.com',
    expectStatus: 200,
    expect(body) {
      assert.deepEqual(
        body.map((u: { name: string }) => u.name),
        ['Olga', 'Ada'],
      )
    },
  },
  {
    name: "q's % and _ are text, not wildcards",
    method: 'GET',
    url: '/v1/admin/users?q=%25',
    expectStatus: 200,
    expect(body) {
      assert.deepEqual(body, [])
    },
  },
  {
    name: 'limit gives a page and a Link to the next one, which keeps q',
    method: 'GET',
    url: '/v1/admin/users?q=e&limit=1',
    expectStatus: 200,
    async expect(body, ctx, res) {
      assert.equal(body.length, 1)
      const link = String(res.headers.link)
      const next = /<([^>]+)>; rel="next"/.exec(link)?.[1]
      assert.ok(next, link)
      assert.match(next, /[?&]q=e(&|$)/)
      const seen = [body[0].name]
      let url: string | undefined = next
      while (url) {
        const page = await ctx.t.request(ctx.users.owner ?? null, 'GET', url)
        assert.equal(page.statusCode, 200, page.body)
        seen.push(...page.json().map((u: { name: string }) => u.name))
        url = /<([^>]+)>; rel="next"/.exec(String(page.headers.link ?? ''))?.[1]
      }
      assert.deepEqual(seen, ['Olga', 'Ada', 'Bob Stone'])
    },
  },
  {
    name: 'a cursor the service did not issue is 400',
    method: 'GET',
    url: '/v1/admin/users?cursor=bm9wZQ',
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'someone who is not an operator gets 403 forbidden',
    as: 'ada',
    method: 'GET',
    url: '/v1/admin/users',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
  {
    name: "an operator's key without the scope admin gets 403 insufficientScope",
    as: 'narrow',
    method: 'GET',
    url: '/v1/admin/users',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'no key is 401',
    as: null,
    method: 'GET',
    url: '/v1/admin/users',
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
  {
    name: 'GET /v1/admin/users/:id reads one user',
    method: 'GET',
    url: '/v1/admin/users/{bob}',
    expectStatus: 200,
    expect(body) {
      assert.equal(body.name, 'Bob Stone')
      assert.equal(body.email, 'bob@example.org')
    },
  },
  {
    name: 'an unknown user is 404',
    method: 'GET',
    url: '/v1/admin/users/nobody',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
])

runScenarios('PATCH /v1/admin/users/:id (docs/api.md#operators)', world, [
  {
    name: "an operator changes a user's plan; the security log records it",
    method: 'PATCH',
    url: '/v1/admin/users/{ada}',
    body: { plan: 'pro' },
    expectStatus: 200,
    async expect(body, ctx) {
      assert.equal(body.plan, 'pro')
      const events = await eventsOf(ctx, ctx.vars.ada as string)
      const changed = events.find((e) => e.kind === 'admin.planChanged')
      assert.ok(changed, JSON.stringify(events))
      assert.equal(changed.actor_id, ctx.vars.owner)
      assert.deepEqual(JSON.parse(changed.detail ?? ''), { from: 'free', to: 'pro' })
    },
  },
  {
    name: 'an unknown plan is 400 and changes nothing',
    method: 'PATCH',
    url: '/v1/admin/users/{ada}',
    body: { plan: 'platinum', verified: false },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    async expect(_body, ctx) {
      const ada = (
        await ctx.t.request(
          ctx.users.owner ?? null,
          'GET',
          '/v1/admin/users/{ada}'.replace('{ada}', ctx.vars.ada as string),
        )
      ).json()
      assert.equal(ada.plan, 'free')
      assert.equal(ada.authLevel, 'verified')
    },
  },
  {
    name: 'an empty body is 400',
    method: 'PATCH',
    url: '/v1/admin/users/{ada}',
    body: {},
    expectStatus: 400,
  },
  {
    name: 'a field the route does not know is 400',
    method: 'PATCH',
    url: '/v1/admin/users/{ada}',
    body: { email: 'x@example.com' },
    expectStatus: 400,
  },
  {
    name: 'unverifying a user makes them authenticated',
    method: 'PATCH',
    url: '/v1/admin/users/{ada}',
    body: { verified: false },
    expectStatus: 200,
    async expect(body, ctx) {
      assert.equal(body.authLevel, 'authenticated')
      const kinds = (await eventsOf(ctx, ctx.vars.ada as string)).map((e) => e.kind)
      assert.ok(kinds.includes('admin.userUnverified'), kinds.join())
    },
  },
  {
    name: 'disabling a user: keys 401, sessions gone, password sign-in 403; enabling undoes it',
    method: 'PATCH',
    url: '/v1/admin/users/{ada}',
    body: { disabled: true },
    expectStatus: 200,
    async expect(body, ctx) {
      assert.equal(body.disabled, true)
      assert.equal(typeof body.disabledAt, 'string')
      assert.equal(body.lastSignInAt, null, 'her sessions ended')
      const key = await ctx.t.request(ctx.users.ada ?? null, 'GET', '/v1/checkAuth')
      assert.equal(key.statusCode, 401, key.body)
      const signIn = await ctx.t.request(null, 'POST', '/v1/auth/login', {
        email: 'ada@example.com',
        password: GOOD_PASSWORD,
      })
      assert.equal(signIn.statusCode, 403, signIn.body)
      assert.equal(signIn.json().errorCode, 'forbidden')
      assert.equal(sessionCookieOf(signIn), undefined)
      const wrong = await ctx.t.request(null, 'POST', '/v1/auth/login', {
        email: 'ada@example.com',
        password: 'not her password at all',
      })
      assert.equal(wrong.statusCode, 401, 'a wrong password says nothing of the account')
      const enabled = await ctx.t.request(
        ctx.users.owner ?? null,
        'PATCH',
        `/v1/admin/users/${ctx.vars.ada}`,
        { disabled: false },
      )
      assert.equal(enabled.statusCode, 200, enabled.body)
      assert.equal(enabled.json().disabled, false)
      assert.equal(
        (await ctx.t.request(ctx.users.ada ?? null, 'GET', '/v1/checkAuth')).statusCode,
        200,
      )
      const again = await ctx.t.request(null, 'POST', '/v1/auth/login', {
        email: 'ada@example.com',
        password: GOOD_PASSWORD,
      })
      assert.equal(again.statusCode, 200, again.body)
      const kinds = (await eventsOf(ctx, ctx.vars.ada as string)).map((e) => e.kind)
      assert.ok(kinds.includes('admin.userDisabled') && kinds.includes('admin.userEnabled'))
    },
  },
  {
    name: "a disabled user's sign-in link is refused, and stays unused",
    method: 'PATCH',
    url: '/v1/admin/users/{ada}',
    body: { disabled: true },
    expectStatus: 200,
    async expect(_body, ctx) {
      const op = ctx.users.owner ?? null
      const made = await ctx.t.request(op, 'POST', `/v1/admin/users/${ctx.vars.ada}/sign-in-link`)
      assert.equal(made.statusCode, 201, made.body)
      const token = String(made.json().url).split('/auth/link/')[1]
      const refused = await ctx.t.request(null, 'POST', '/v1/auth/link', { token })
      assert.equal(refused.statusCode, 403, refused.body)
      // the link's own page says so too
      const page = await ctx.t.request(null, 'POST', `/auth/link/${token}`, undefined, {
        'sec-fetch-site': 'same-origin',
      })
      assert.equal(page.statusCode, 403, page.body)
      assert.match(page.body, /disabled/)
      await ctx.t.request(op, 'PATCH', `/v1/admin/users/${ctx.vars.ada}`, { disabled: false })
      const used = await ctx.t.request(null, 'POST', '/v1/auth/link', { token })
      assert.equal(used.statusCode, 200, 'the link was left unused')
    },
  },
  {
    name: "a disabled user's reset and verification links are refused, and change nothing",
    method: 'PATCH',
    url: '/v1/admin/users/{ada}',
    body: { disabled: true },
    expectStatus: 200,
    async expect(_body, ctx) {
      const { db } = ctx.t.database
      const userId = ctx.vars.ada as string
      const clock = { now: () => Date.now() }
      const reset = await issueAuthToken(db, clock, {
        purpose: 'password-reset',
        userId,
        data: { emailKey: 'ada@example.com' },
        lifetimeMs: 60_000,
      })
      const verify = await issueAuthToken(db, clock, {
        purpose: 'verify-email',
        userId,
        data: { email: 'ada@example.net' },
        lifetimeMs: 60_000,
      })
      const before = await db.selectFrom('users').selectAll().where('id', '=', userId).execute()
      const resetting = await ctx.t.request(null, 'POST', '/v1/auth/password-reset/confirm', {
        token: reset.token,
        password: 'another long passphrase 7',
      })
      assert.equal(resetting.statusCode, 403, resetting.body)
      const verifying = await ctx.t.request(null, 'POST', '/v1/auth/verify-email', {
        token: verify.token,
      })
      assert.equal(verifying.statusCode, 403, verifying.body)
      const after = await db.selectFrom('users').selectAll().where('id', '=', userId).execute()
      assert.deepEqual(after, before, 'neither the password nor the address changed')
      const used = await db
        .selectFrom('auth_tokens')
        .select('used_at')
        .where('id', 'in', [reset.id, verify.id])
        .execute()
      assert.deepEqual(
        used.map((r) => r.used_at),
        [null, null],
        'both links stay unused',
      )
    },
  },
  {
    name: 'an operator cannot demote themselves when no other operator is left (409)',
    method: 'PATCH',
    url: '/v1/admin/users/{owner}',
    body: { admin: false },
    expectStatus: 409,
    expectErrorCode: 'conflict',
  },
  {
    name: 'an operator cannot disable themselves when no other operator is left (409)',
    method: 'PATCH',
    url: '/v1/admin/users/{owner}',
    body: { disabled: true },
    expectStatus: 409,
    expectErrorCode: 'conflict',
  },
  {
    name: 'with another operator, one may step down; their keys lose the scope admin',
    method: 'PATCH',
    url: '/v1/admin/users/{bob}',
    body: { admin: true },
    expectStatus: 200,
    async expect(body, ctx) {
      assert.equal(body.admin, true)
      const op = ctx.users.owner ?? null
      const down = await ctx.t.request(op, 'PATCH', `/v1/admin/users/${ctx.vars.owner}`, {
        admin: false,
      })
      assert.equal(down.statusCode, 200, down.body)
      assert.equal(down.json().admin, false)
      // the key holding every scope now holds every scope but admin; the one that held only
      // status:read is as it was
      const keys = await ctx.t.request(op, 'GET', '/v1/user/api-keys')
      assert.equal(keys.statusCode, 200, keys.body)
      for (const key of keys.json()) assert.ok(!key.scopes.includes('admin'), keys.body)
      const refused = await ctx.t.request(op, 'GET', '/v1/admin/users')
      assert.equal(refused.statusCode, 403)
      const kinds = (await eventsOf(ctx, ctx.vars.owner as string)).map((e) => e.kind)
      assert.ok(kinds.includes('admin.adminRevoked'), kinds.join())
    },
  },
  {
    name: 'someone who is not an operator cannot make themselves one (403)',
    as: 'ada',
    method: 'PATCH',
    url: '/v1/admin/users/{ada}',
    body: { admin: true },
    expectStatus: 403,
    expectErrorCode: 'forbidden',
  },
])

runScenarios('DELETE /v1/admin/users/:id (docs/api.md#operators)', world, [
  {
    name: 'deleting a user deletes their statuses and keys; the log keeps the record',
    method: 'DELETE',
    url: '/v1/admin/users/{ada}',
    expectStatus: 204,
    async expect(_body, ctx) {
      const op = ctx.users.owner ?? null
      assert.equal(
        (await ctx.t.request(op, 'GET', `/v1/admin/users/${ctx.vars.ada}`)).statusCode,
        404,
      )
      assert.equal(
        (await ctx.t.request(ctx.users.ada ?? null, 'GET', '/v1/checkAuth')).statusCode,
        401,
      )
      const status = await ctx.t.database.db
        .selectFrom('statuses')
        .select('id')
        .where('id', '=', ctx.vars.status as string)
        .executeTakeFirst()
      assert.equal(status, undefined)
      const deletion = await ctx.t.database.db
        .selectFrom('status_deletions')
        .select('status_id')
        .where('status_id', '=', ctx.vars.status as string)
        .executeTakeFirst()
      // its history goes after, in batches (the sweep may have run already)
      assert.ok(deletion === undefined || deletion.status_id === ctx.vars.status)
      const events = await eventsOf(ctx, ctx.vars.ada as string)
      const deleted = events.find((e) => e.kind === 'admin.userDeleted')
      assert.ok(deleted)
      assert.equal(JSON.parse(deleted.detail ?? '').email, 'ada@example.com')
    },
  },
  {
    name: 'the last operator cannot be deleted (409)',
    method: 'DELETE',
    url: '/v1/admin/users/{owner}',
    expectStatus: 409,
    expectErrorCode: 'conflict',
  },
  {
    name: 'an unknown user is 404',
    method: 'DELETE',
    url: '/v1/admin/users/nobody',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'someone who is not an operator gets 403 and nothing is deleted',
    as: 'ada',
    method: 'DELETE',
    url: '/v1/admin/users/{bob}',
    expectStatus: 403,
    expectErrorCode: 'forbidden',
    async expect(_body, ctx) {
      const bob = await ctx.t.request(
        ctx.users.owner ?? null,
        'GET',
        `/v1/admin/users/${ctx.vars.bob}`,
      )
      assert.equal(bob.statusCode, 200)
    },
  },
])

runScenarios('POST /v1/admin/users/:id/sign-in-link (docs/api.md#operators)', world, [
  {
    name: 'an operator gets a one-time link that signs the user in once',
    method: 'POST',
    url: '/v1/admin/users/{bob}/sign-in-link',
    expectStatus: 201,
    async expect(body, ctx) {
      const token = String(body.url).split('/auth/link/')[1]
      const first = await ctx.t.request(null, 'POST', '/v1/auth/link', { token })
      assert.equal(first.statusCode, 200, first.body)
      assert.equal(first.json().id, ctx.vars.bob)
      const second = await ctx.t.request(null, 'POST', '/v1/auth/link', { token })
      assert.equal(second.statusCode, 410)
      const kinds = (await eventsOf(ctx, ctx.vars.bob as string)).map((e) => e.kind)
      assert.ok(kinds.includes('admin.signInLinkCreated'), kinds.join())
    },
  },
  {
    name: 'an unknown user is 404',
    method: 'POST',
    url: '/v1/admin/users/nobody/sign-in-link',
    expectStatus: 404,
  },
  {
    name: 'someone who is not an operator gets 403',
    as: 'ada',
    method: 'POST',
    url: '/v1/admin/users/{bob}/sign-in-link',
    expectStatus: 403,
  },
])
