import assert from 'node:assert/strict'
import { asSession, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'

// docs/api.md#your-language, docs/languages.md

/** A key of the signed-in user with `scopes`, made through the API. */
async function keyOf(t: TestApp, cookie: string, scopes: string[]): Promise<string> {
  const res = await asSession(t, cookie, 'POST', '/v1/user/api-keys', { label: 'locale', scopes })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().key
}

/** The user's language as GET /v1/user and the export show it: they always agree. */
async function storedLocale(ctx: ScenarioContext): Promise<string | null> {
  const cookie = { cookie: `statusd_session=${ctx.vars.cookie}` }
  const profile = await ctx.t.request(null, 'GET', '/v1/user', undefined, cookie)
  assert.equal(profile.statusCode, 200, profile.body)
  const exported = await ctx.t.request(null, 'GET', '/v1/user/export', undefined, cookie)
  assert.equal(exported.statusCode, 200, exported.body)
  assert.equal(exported.json().profile.locale, profile.json().locale, 'the export holds it')
  return profile.json().locale
}

const unchanged = async (_: unknown, ctx: ScenarioContext) =>
  assert.equal(await storedLocale(ctx), 'de', 'a refused change leaves the language as it was')

runScenarios(
  'PATCH /v1/user {locale}: the language of your mails and notifications',
  async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    const { cookie } = await signUpUser(t)
    // the user has chosen German before each row
    const res = await asSession(t, cookie, 'PATCH', '/v1/user', { locale: 'de' })
    assert.equal(res.statusCode, 200, res.body)
    return {
      t,
      users: {
        account: { id: '', key: await keyOf(t, cookie, ['account']) },
        valueOnly: { id: '', key: await keyOf(t, cookie, ['status:value']) },
      },
      vars: { cookie },
    }
  },
  [
    {
      name: 'a session sets English: answered and stored',
      as: null,
      method: 'PATCH',
      url: '/v1/user',
      headers: { cookie: 'statusd_session={cookie}', 'sec-fetch-site': 'same-origin' },
      body: { locale: 'en' },
      expectStatus: 200,
      expect: async (body, ctx) => {
        assert.equal(body.locale, 'en')
        assert.equal(await storedLocale(ctx), 'en')
      },
    },
    {
      name: 'null clears the choice (mails in English)',
      as: null,
      method: 'PATCH',
      url: '/v1/user',
      headers: { cookie: 'statusd_session={cookie}', 'sec-fetch-site': 'same-origin' },
      body: { locale: null },
      expectStatus: 200,
      expect: async (body, ctx) => {
        assert.equal(body.locale, null)
        assert.equal(await storedLocale(ctx), null)
      },
    },
    {
      name: 'a key with `account` may set it, the name beside it too',
      as: 'account',
      method: 'PATCH',
      url: '/v1/user',
      body: { locale: 'en', name: 'Ada L.' },
      expectStatus: 200,
      expect: async (body, ctx) => {
        assert.deepEqual([body.locale, body.name], ['en', 'Ada L.'])
        assert.equal(await storedLocale(ctx), 'en')
      },
    },
    {
      name: 'a name change alone keeps the language',
      as: 'account',
      method: 'PATCH',
      url: '/v1/user',
      body: { name: 'Ada L.' },
      expectStatus: 200,
      expect: async (body, ctx) => {
        assert.equal(body.locale, 'de')
        await unchanged(body, ctx)
      },
    },
    {
      name: 'a language statusd does not speak is 400 and changes nothing',
      as: 'account',
      method: 'PATCH',
      url: '/v1/user',
      body: { locale: 'fr' },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: unchanged,
    },
    {
      name: 'a code is lower case: "DE" is 400',
      as: 'account',
      method: 'PATCH',
      url: '/v1/user',
      body: { locale: 'DE' },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: unchanged,
    },
    {
      name: 'a region tag is not a language statusd has: "de-AT" is 400',
      as: 'account',
      method: 'PATCH',
      url: '/v1/user',
      body: { locale: 'de-AT' },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: unchanged,
    },
    {
      name: 'a number is 400',
      as: 'account',
      method: 'PATCH',
      url: '/v1/user',
      body: { locale: 1 },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: unchanged,
    },
    {
      name: 'with a valid name beside an invalid language nothing changes',
      as: 'account',
      method: 'PATCH',
      url: '/v1/user',
      body: { name: 'Someone Else', locale: 'xx' },
      expectStatus: 400,
      expectErrorCode: 'validationError',
      expect: async (body, ctx) => {
        await unchanged(body, ctx)
        const profile = await ctx.t.request(null, 'GET', '/v1/user', undefined, {
          cookie: `statusd_session=${ctx.vars.cookie}`,
        })
        assert.notEqual(profile.json().name, 'Someone Else')
      },
    },
    {
      name: 'a key without `account` may not',
      as: 'valueOnly',
      method: 'PATCH',
      url: '/v1/user',
      body: { locale: 'en' },
      expectStatus: 403,
      expectErrorCode: 'insufficientScope',
      expect: unchanged,
    },
    {
      name: 'no one may not',
      as: null,
      method: 'PATCH',
      url: '/v1/user',
      body: { locale: 'en' },
      expectStatus: 401,
      expectErrorCode: 'unauthorized',
      expect: unchanged,
    },
    {
      name: 'GET /v1/user shows it',
      as: 'account',
      method: 'GET',
      url: '/v1/user',
      expectStatus: 200,
      expect: (body) => assert.equal(body.locale, 'de'),
    },
  ],
)
