import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { hashApiKey, newId } from '../../src/lib/ids.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'

// Passkeys over HTTP (docs/api.md#passkeys): what needs no authenticator. Registration and
// sign-in with real credentials, and their refusals, are in test/browser/passkeys.test.ts.

const PUBLIC_URL = 'https://status.example.com'

const b64url = (text: string) => Buffer.from(text).toString('base64url')

/** An answer shaped like navigator.credentials.create()'s, signed by nobody. */
const forgedRegistration = (challenge: string) => ({
  id: 'AAAA',
  rawId: 'AAAA',
  type: 'public-key',
  clientExtensionResults: {},
  response: {
    clientDataJSON: b64url(
      JSON.stringify({ type: 'webauthn.create', challenge, origin: PUBLIC_URL }),
    ),
    attestationObject: b64url('not CBOR'),
    transports: ['internal'],
  },
})

/** An answer shaped like navigator.credentials.get()'s, signed by nobody. */
const forgedAssertion = (credentialId: string, challenge: string) => ({
  id: credentialId,
  rawId: credentialId,
  type: 'public-key',
  clientExtensionResults: {},
  response: {
    clientDataJSON: b64url(JSON.stringify({ type: 'webauthn.get', challenge, origin: PUBLIC_URL })),
    authenticatorData: b64url('x'.repeat(37)),
    signature: b64url('not a signature'),
  },
})

/** A stored passkey, as a registration would have left it (its key is not a real one). */
async function seedPasskey(t: TestApp, userId: string, name: string) {
  const id = newId()
  const credentialId = Buffer.from(newId()).toString('base64url')
  await t.database.db
    .insertInto('passkeys')
    .values({
      id,
      user_id: userId,
      credential_id: credentialId,
      public_key: b64url('not a COSE key'),
      counter: 0,
      transports: JSON.stringify(['internal']),
      name,
      created_at: new Date().toISOString(),
      last_used_at: null,
    })
    .execute()
  return { id, credentialId }
}

async function withPasskeys(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx, { deps: { publicUrl: PUBLIC_URL } })
  const owner = await t.user({ name: 'Ada' })
  const other = await t.user({ name: 'Bob' })
  const unverified = await t.user({ verified: false })
  const mine = await seedPasskey(t, owner.id, 'Laptop')
  const theirs = await seedPasskey(t, other.id, 'Phone')
  // a key of the owner's for statuses only, and one for the account only
  const scoped = async (scopes: string[]) => {
    const res = await t.request(owner, 'POST', '/v1/user/api-keys', { scopes })
    assert.equal(res.statusCode, 201, res.body)
    return { id: owner.id, key: res.json().key as string }
  }
  return {
    t,
    users: {
      owner,
      other,
      unverified,
      statusKey: await scoped(['status:read', 'status:write']),
      accountKey: await scoped(['account']),
    },
    vars: {
      mine: mine.id,
      mineCredential: mine.credentialId,
      theirs: theirs.id,
    },
  }
}

runScenarios('your passkeys (docs/api.md#passkeys)', withPasskeys, [
  {
    name: 'registration options need a credential',
    as: null,
    method: 'POST',
    url: '/v1/user/passkeys/registration-options',
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
  {
    name: "registration options: PUBLIC_URL's relying party, your passkeys excluded, user verification and a discoverable credential required",
    method: 'POST',
    url: '/v1/user/passkeys/registration-options',
    expectStatus: 200,
    expect: (body, { vars }) => {
      assert.deepEqual(body.rp, { name: 'statusd', id: 'status.example.com' })
      assert.equal(body.user.displayName, 'Ada')
      assert.deepEqual(
        body.excludeCredentials.map((c: { id: string }) => c.id),
        [vars.mineCredential],
      )
      assert.deepEqual(body.authenticatorSelection, {
        residentKey: 'required',
        requireResidentKey: true,
        userVerification: 'required',
      })
      assert.equal(body.attestation, 'none')
      // a one-time token (≈256 random bits), as bytes in base64url
      assert.match(Buffer.from(body.challenge, 'base64url').toString(), /^sdl_[A-Za-z0-9]{43}$/)
      assert.equal(body.timeout, 300_000)
    },
  },
  {
    name: 'a key without the scope `account` may not touch passkeys: 403 insufficientScope',
    as: 'statusKey',
    method: 'GET',
    url: '/v1/user/passkeys',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'a key without the scope `account` may not start a registration',
    as: 'statusKey',
    method: 'POST',
    url: '/v1/user/passkeys/registration-options',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
  },
  {
    name: 'a key without the scope `account` may not delete a passkey, which stays',
    as: 'statusKey',
    method: 'DELETE',
    url: '/v1/user/passkeys/{mine}',
    expectStatus: 403,
    expectErrorCode: 'insufficientScope',
    expect: async (_body, { t, users }) => {
      const list = await t.request(users.owner ?? null, 'GET', '/v1/user/passkeys')
      assert.equal(list.json().length, 1)
    },
  },
  {
    name: 'a key with the scope `account` manages passkeys',
    as: 'accountKey',
    method: 'GET',
    url: '/v1/user/passkeys',
    expectStatus: 200,
    expect: (body) => assert.equal(body.length, 1),
  },
  {
    name: 'registration options: an unverified user may register a passkey',
    as: 'unverified',
    method: 'POST',
    url: '/v1/user/passkeys/registration-options',
    expectStatus: 200,
  },
  {
    name: 'registration: an answer to no challenge of yours is 400, and stores nothing',
    method: 'POST',
    url: '/v1/user/passkeys',
    body: { response: forgedRegistration(b64url('a challenge never issued')) },
    expectStatus: 400,
    expectErrorCode: 'validationError',
    expect: async (body, { t, users }) => {
      assert.equal(body.errors[0].field, 'response')
      const list = await t.request(users.owner ?? null, 'GET', '/v1/user/passkeys')
      assert.equal(list.json().length, 1)
    },
  },
  {
    name: 'registration: an unknown property is refused',
    method: 'POST',
    url: '/v1/user/passkeys',
    body: { response: forgedRegistration('x'), extra: 1 },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'registration: a response that is not base64url is refused',
    method: 'POST',
    url: '/v1/user/passkeys',
    body: {
      response: {
        ...forgedRegistration('x'),
        response: { clientDataJSON: '{"json": 1}', attestationObject: 'AA' },
      },
    },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'registration: unreadable clientDataJSON is 400',
    method: 'POST',
    url: '/v1/user/passkeys',
    body: {
      response: {
        ...forgedRegistration('x'),
        response: { clientDataJSON: 'AAAA', attestationObject: 'AA' },
      },
    },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'registration without a credential is 401',
    as: null,
    method: 'POST',
    url: '/v1/user/passkeys',
    body: { response: forgedRegistration('x') },
    expectStatus: 401,
    expectErrorCode: 'unauthorized',
  },
  {
    name: 'list: your passkeys only, never a key or credential id',
    method: 'GET',
    url: '/v1/user/passkeys',
    expectStatus: 200,
    expect: (body, { vars }) => {
      assert.equal(body.length, 1)
      assert.deepEqual(Object.keys(body[0]).sort(), [
        'createdAt',
        'id',
        'lastUsedAt',
        'name',
        'transports',
      ])
      assert.equal(body[0].id, vars.mine)
      assert.equal(body[0].name, 'Laptop')
      assert.deepEqual(body[0].transports, ['internal'])
      assert.equal(body[0].lastUsedAt, null)
    },
  },
  {
    name: 'rename: yours',
    method: 'PATCH',
    url: '/v1/user/passkeys/{mine}',
    body: { name: 'Work laptop' },
    expectStatus: 200,
    expect: (body) => assert.equal(body.name, 'Work laptop'),
  },
  {
    name: "rename: another user's passkey is 404, as an unknown one",
    method: 'PATCH',
    url: '/v1/user/passkeys/{theirs}',
    body: { name: 'Mine now' },
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, { t, users }) => {
      const list = await t.request(users.other ?? null, 'GET', '/v1/user/passkeys')
      assert.equal(list.json()[0].name, 'Phone')
    },
  },
  {
    name: 'rename: an empty name is refused',
    method: 'PATCH',
    url: '/v1/user/passkeys/{mine}',
    body: { name: ' ' },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'rename: a name over 100 characters is refused',
    method: 'PATCH',
    url: '/v1/user/passkeys/{mine}',
    body: { name: 'x'.repeat(101) },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
  {
    name: 'delete: yours, then it is gone',
    method: 'DELETE',
    url: '/v1/user/passkeys/{mine}',
    expectStatus: 204,
    expect: async (_body, { t, users }) => {
      const list = await t.request(users.owner ?? null, 'GET', '/v1/user/passkeys')
      assert.deepEqual(list.json(), [])
    },
  },
  {
    name: "delete: another user's passkey is 404 and stays",
    method: 'DELETE',
    url: '/v1/user/passkeys/{theirs}',
    expectStatus: 404,
    expectErrorCode: 'notFound',
    expect: async (_body, { t, users }) => {
      const list = await t.request(users.other ?? null, 'GET', '/v1/user/passkeys')
      assert.equal(list.json().length, 1)
    },
  },
  {
    name: 'delete: an unknown id is 404',
    method: 'DELETE',
    url: '/v1/user/passkeys/nope',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'sign-in options: anyone, no account named',
    as: null,
    method: 'POST',
    url: '/v1/auth/passkey/options',
    expectStatus: 200,
    expect: (body) => {
      assert.equal(typeof body.challengeId, 'string')
      assert.deepEqual(Object.keys(body.options).sort(), [
        'challenge',
        'rpId',
        'timeout',
        'userVerification',
      ])
      assert.equal(body.options.rpId, 'status.example.com')
      assert.equal(body.options.userVerification, 'required')
    },
  },
  {
    name: 'sign-in: an unknown challenge is 401 invalidCredentials, and no session',
    as: null,
    method: 'POST',
    url: '/v1/auth/passkey/login',
    body: { challengeId: 'nope', response: forgedAssertion('AAAA', 'x') },
    expectStatus: 401,
    expectErrorCode: 'invalidCredentials',
    expect: (_body, _ctx, res) => assert.equal(res.headers['set-cookie'], undefined),
  },
  {
    name: "sign-in from another site's page is refused: 403 csrfRejected",
    as: null,
    method: 'POST',
    url: '/v1/auth/passkey/login',
    body: { challengeId: 'x', response: forgedAssertion('AAAA', 'x') },
    headers: { origin: 'https://evil.example' },
    expectStatus: 403,
    expectErrorCode: 'csrfRejected',
  },
  {
    name: 'sign-in answers are never cached',
    as: null,
    method: 'POST',
    url: '/v1/auth/passkey/options',
    expectStatus: 200,
    expect: (_body, _ctx, res) => assert.equal(res.headers['cache-control'], 'no-store'),
  },
  {
    name: 'sign-in: a malformed answer is 400',
    as: null,
    method: 'POST',
    url: '/v1/auth/passkey/login',
    body: { challengeId: 'x', response: { id: 'AAAA' } },
    expectStatus: 400,
    expectErrorCode: 'validationError',
  },
])

describe('sign-in with a passkey, refused without a real answer', () => {
  it('a forged signature over an open challenge is 401 and leaves the challenge open', async (ctx) => {
    const t = await makeApp(ctx, { deps: { publicUrl: PUBLIC_URL } })
    const owner = await t.user()
    const { credentialId } = await seedPasskey(t, owner.id, 'Laptop')
    const options = (await t.request(null, 'POST', '/v1/auth/passkey/options')).json()
    const res = await t.request(null, 'POST', '/v1/auth/passkey/login', {
      challengeId: options.challengeId,
      response: forgedAssertion(credentialId, options.options.challenge),
    })
    assert.equal(res.statusCode, 401)
    assert.equal(res.json().errorCode, 'invalidCredentials')
    assert.equal(res.headers['set-cookie'], undefined)
    // a failed request changes no data: not the challenge, not the passkey
    const row = await t.database.db
      .selectFrom('auth_tokens')
      .select('used_at')
      .where('token_hash', '=', hashApiKey(options.challengeId))
      .executeTakeFirstOrThrow()
    assert.equal(row.used_at, null)
    const passkey = (await t.request(owner, 'GET', '/v1/user/passkeys')).json()[0]
    assert.equal(passkey.lastUsedAt, null)
  })
})

describe('relying party (docs/accounts.md#passkeys)', () => {
  const optionsAt = async (
    ctx: Lifetime,
    publicUrl: string | null,
    host: string,
  ): Promise<{ status: number; body: { rp?: { id: string }; message?: string } }> => {
    const t = await makeApp(ctx, { deps: { publicUrl } })
    const user = await t.user()
    const res = await t.request(user, 'POST', '/v1/user/passkeys/registration-options', undefined, {
      host,
    })
    return { status: res.statusCode, body: res.json() }
  }

  it("is PUBLIC_URL's host name, whatever the request's Host", async (ctx) => {
    const res = await optionsAt(ctx, 'https://status.example.com/statusd', 'evil.example')
    assert.equal(res.status, 200)
    assert.equal(res.body.rp?.id, 'status.example.com')
  })

  it('without PUBLIC_URL, is localhost for a request to localhost', async (ctx) => {
    const res = await optionsAt(ctx, null, 'localhost:8080')
    assert.equal(res.status, 200)
    assert.equal(res.body.rp?.id, 'localhost')
  })

  it('without PUBLIC_URL, any other host is 409 naming PUBLIC_URL', async (ctx) => {
    for (const host of ['127.0.0.1:8080', 'status.example.com', '[::1]:8080']) {
      const res = await optionsAt(ctx, null, host)
      assert.equal(res.status, 409, host)
      assert.match(res.body.message ?? '', /PUBLIC_URL/)
    }
  })

  it('a PUBLIC_URL with an IP address is 409 naming PUBLIC_URL: an IP is no RP ID', async (ctx) => {
    const res = await optionsAt(ctx, 'http://192.168.1.20:8080', '192.168.1.20:8080')
    assert.equal(res.status, 409)
    assert.match(res.body.message ?? '', /PUBLIC_URL names an IP address/)
  })

  it('sign-in options follow the same rule', async (ctx) => {
    const t = await makeApp(ctx, { deps: { publicUrl: null } })
    const res = await t.request(null, 'POST', '/v1/auth/passkey/options', undefined, {
      host: '10.0.0.5',
    })
    assert.equal(res.statusCode, 409)
    assert.equal(res.json().errorCode, 'conflict')
  })
})
