import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import type { ParsedMail } from 'mailparser'
import { createMailer } from '../../src/lib/mailer.ts'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { CookieJar } from '../helpers/cookie-jar.ts'
import { postgresOnly, TEST_ENGINE, testDatabase } from '../helpers/engine.ts'
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts'
import { SseTestClient } from '../helpers/sse.ts'

// Holding against attackers, people (docs/accounts.md#e-mail, docs/security.md): with SMTP
// set, an account whose address nobody proved gets nothing that lasts; when the address is
// proven (a verification or reset link), every credential the account had before ends, so
// whoever signed up with someone else's address keeps nothing. Real SMTP server, real
// sockets; the links are followed as a browser does (the page, then its form).

// biome-ignore lint/suspicious/noExplicitAny: a parsed JSON answer, every use checked by an assertion
type Json = any

/** The answer's body, once its status is the one expected (else a failure showing the body). */
async function expectStatus(res: Response, status: number, what?: string): Promise<string> {
  const text = await res.text()
  assert.equal(res.status, status, `${what ?? ''} ${text}`)
  return text
}

/** The answer's JSON, once its status is the one expected. */
async function expectJson(res: Response, status: number, what?: string): Promise<Json> {
  const text = await expectStatus(res, status, what)
  return text === '' ? undefined : JSON.parse(text)
}

const NEW_PASSWORD = 'a brand new passphrase 7'
const VICTIM = 'victim@example.com'

interface World {
  t: TestApp
  /** The SMTP server the app mails through; undefined: the app sends no mail. */
  smtp: TestSmtpServer | undefined
  /** http://127.0.0.1:<port>: the app on a real socket. */
  base: string
}

async function world(
  ctx: Lifetime,
  {
    mail = true,
    databaseUrl,
    keyCacheTtlMs,
    smtp: shared,
  }: {
    mail?: boolean
    databaseUrl?: string
    keyCacheTtlMs?: number
    smtp?: TestSmtpServer
  } = {},
): Promise<World> {
  const smtp = shared ?? (mail ? await startSmtpServer(ctx) : undefined)
  const t = await makeApp(ctx, {
    ...(databaseUrl !== undefined && { databaseUrl }),
    ...(keyCacheTtlMs !== undefined && { keyCacheTtlMs }),
    deps: {
      signup: 'open',
      sse: { heartbeatMs: 50 },
      ...(smtp && { mailer: createMailer(smtp.url, 'statusd <statusd@example.com>') }),
    },
  })
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  return { t, smtp, base: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` }
}

/** A browser: one cookie jar on the app's origin. */
class Browser {
  readonly jar = new CookieJar()
  readonly w: World
  constructor(w: World) {
    this.w = w
  }
  /** A JSON request with the session cookie (and the page's own Origin on a write). */
  json(method: string, path: string, json?: unknown): Promise<Response> {
    return this.jar.fetch(this.w.base, path, { method, ...(json !== undefined && { json }) })
  }
  /** Opens a mailed link's page, then presses its button (a same-origin form post). */
  async follow(link: string, fields: Record<string, string> = {}): Promise<Response> {
    const path = new URL(link).pathname
    await expectStatus(await this.jar.fetch(this.w.base, path), 200)
    return this.jar.fetch(this.w.base, path, {
      method: 'POST',
      // the cookie a sign-in's 303 sets is the jar's to keep
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })
  }
}

const mailsTo = (w: World) => w.smtp as TestSmtpServer

/** The next message with this subject (others, such as a sign-up's link, are passed over). */
async function nextMail(w: World, subject: string): Promise<ParsedMail> {
  for (;;) {
    const mail = await mailsTo(w).next()
    if (mail.subject === subject) return mail
  }
}

async function signUp(
  w: World,
  email: string,
  name: string,
  invitation?: string,
): Promise<Browser & { id: string }> {
  const browser = new Browser(w)
  const res = await browser.json('POST', '/v1/auth/signup', {
    email,
    name,
    password: GOOD_PASSWORD,
    ...(invitation !== undefined && { invitation }),
  })
  return Object.assign(browser, { id: (await expectJson(res, 201)).id as string })
}

/** The owner of the address asks for a reset link and follows it: signed in, new password. */
async function resetThroughMail(w: World, email: string): Promise<Browser> {
  const owner = new Browser(w)
  assert.equal((await owner.json('POST', '/v1/auth/password-reset', { email })).status, 202)
  const link = linkIn(await nextMail(w, 'Reset your password'), `${w.base}/auth/reset/`)
  const done = await owner.follow(link, { password: NEW_PASSWORD })
  await expectStatus(done, 303, 'signed in, and sent to the front page')
  return owner
}

/** A GET with an API key, over the socket: its status code. */
const withKey = async (w: World, key: string, path: string): Promise<number> => {
  const res = await fetch(`${w.base}${path}`, { headers: { 'service-api-key': key } })
  await res.arrayBuffer()
  return res.status
}

/** A passkey row for the user, as registration stores it (the WebAuthn ceremony is passkeys.test.ts's). */
async function plantPasskey(t: TestApp, userId: string): Promise<void> {
  await t.database.db
    .insertInto('passkeys')
    .values({
      id: `pk-${userId}`,
      user_id: userId,
      credential_id: `cred-${userId}`,
      public_key: 'pQECAyYgASFYIA',
      counter: 0,
      transports: null,
      name: 'planted',
      created_at: new Date().toISOString(),
      last_used_at: null,
    })
    .execute()
}

/** An owner (made by the operator, as the first user is) with a status and an open invitation link. */
async function ownerWithLink(w: World) {
  const owner = await w.t.user({ name: 'Olivia Owner' })
  const made = await w.t.request(owner, 'POST', '/v1/status-keys/help-desk', { value: 'ON' })
  assert.equal(made.statusCode, 201, made.body)
  const statusId = made.json().id as string
  const link = await w.t.request(owner, 'POST', `/v1/status/${statusId}/invitations`, {
    role: 'subscriber',
    maxUses: 10,
  })
  assert.equal(link.statusCode, 201, link.body)
  const token = (link.json().url as string).split('/invite/')[1] as string
  return { owner, statusId, token }
}

describe('With SMTP set, an account whose e-mail is not verified can sign in and see what is shared with it, but cannot make API keys, passkeys, channels, invitations or share links', () => {
  const refused: { name: string; method: string; path: (ids: Ids) => string; body?: unknown }[] = [
    { name: 'an API key', method: 'POST', path: () => '/v1/user/api-keys', body: {} },
    {
      name: 'a rotated API key',
      method: 'POST',
      path: () => '/v1/user/api-keys/XnotAkey000000000000/rotate',
    },
    {
      name: 'a passkey (its options)',
      method: 'POST',
      path: () => '/v1/user/passkeys/registration-options',
    },
    { name: 'a passkey', method: 'POST', path: () => '/v1/user/passkeys', body: {} },
    {
      name: 'a channel',
      method: 'POST',
      path: () => '/v1/user/channels',
      body: { type: 'webhook', config: { url: 'https://hooks.example.com/x' } },
    },
    {
      name: 'an invitation link',
      method: 'POST',
      path: (ids) => `/v1/status/${ids.statusId}/invitations`,
      body: { role: 'subscriber' },
    },
    {
      name: 'an invitation to a role',
      method: 'PUT',
      path: (ids) => `/v1/status/${ids.statusId}/users/${ids.ownerId}`,
      body: { role: 'subscriber' },
    },
    {
      name: 'a share link',
      method: 'POST',
      path: (ids) => `/v1/status/${ids.statusId}/share-links`,
      body: {},
    },
  ]
  type Ids = { statusId: string; ownerId: string }

  it('each is 403 emailNotVerified, with the JSON error body; nothing is made', async (ctx) => {
    const w = await world(ctx)
    const { owner, statusId } = await ownerWithLink(w)
    const eve = await signUp(w, VICTIM, 'Eve')
    for (const r of refused) {
      const res = await eve.json(r.method, r.path({ statusId, ownerId: owner.id }), r.body)
      const body = await expectJson(res, 403, r.name)
      assert.equal(body.errorCode, 'emailNotVerified', r.name)
      assert.match(body.message, /Confirm your e-mail address/, r.name)
    }
    const keys = await w.t.database.db
      .selectFrom('api_keys')
      .select('id')
      .where('user_id', '=', eve.id)
      .execute()
    assert.deepEqual(keys, [], 'no key was made')
  })

  it('it signs in, and sees and answers the invitations made to it', async (ctx) => {
    const w = await world(ctx)
    const { owner, statusId, token } = await ownerWithLink(w)
    const eve = await signUp(w, VICTIM, 'Eve')
    const again = new Browser(w)
    const signIn = await again.json('POST', '/v1/auth/login', {
      email: VICTIM,
      password: GOOD_PASSWORD,
    })
    assert.equal(signIn.status, 200)
    const me = await expectJson(await again.json('GET', '/v1/user'), 200)
    assert.equal(me.emailVerified, false)
    // an invitation to a role, and a link (not bound to an address)
    const offered = await w.t.request(owner, 'PUT', `/v1/status/${statusId}/users/${eve.id}`, {
      role: 'subscriber',
    })
    assert.equal(offered.statusCode, 202, offered.body)
    const pending = await expectJson(await eve.json('GET', '/v1/user/invitations'), 200)
    assert.equal(pending.length, 1)
    assert.equal(
      (await eve.json('POST', `/v1/user/invitations/${pending[0].id}/accept`)).status,
      200,
    )
    assert.equal((await eve.json('POST', `/v1/invitations/${token}/accept`)).status, 200)
  })

  it('once the address is confirmed through its link, the same person may make them', async (ctx) => {
    const w = await world(ctx)
    await signUp(w, 'ada@example.com', 'Ada')
    const link = linkIn(await nextMail(w, 'Confirm your e-mail address'), `${w.base}/auth/verify/`)
    const ada = new Browser(w)
    assert.equal((await ada.follow(link)).status, 200)
    const key = await ada.json('POST', '/v1/user/api-keys', {})
    await expectJson(key, 201)
  })

  it('without SMTP nothing changes: a sign-up is verified and makes a key', async (ctx) => {
    const w = await world(ctx, { mail: false })
    const ada = await signUp(w, 'ada@example.com', 'Ada')
    const key = await ada.json('POST', '/v1/user/api-keys', {})
    await expectJson(key, 201)
  })

  it('the first user the CLI makes, and a person who joined through an invitation, are not affected', async (ctx) => {
    const w = await world(ctx)
    const { owner, token } = await ownerWithLink(w)
    const made = await w.t.request(owner, 'POST', '/v1/user/api-keys', { scopes: ['status:read'] })
    assert.equal(made.statusCode, 201, made.body)
    const sam = await signUp(w, 'sam@example.com', 'Sam', token)
    const key = await sam.json('POST', '/v1/user/api-keys', {})
    await expectJson(key, 201)
  })
})

describe('When an address is proven (verification link, password-reset link), every credential the account had before the proof is revoked, so whoever registered the address first keeps nothing', () => {
  it("finding 2, as attacked: a sign-up with the victim's address gets no key, and the victim's reset leaves the attacker nothing", async (ctx) => {
    const w = await world(ctx)
    const attacker = await signUp(w, VICTIM, 'Victim')
    const planted = await attacker.json('POST', '/v1/user/api-keys', {
      scopes: ['status:*', 'keys', 'account'],
    })
    // before the fix: 201, a key with every scope
    assert.equal((await expectJson(planted, 403)).errorCode, 'emailNotVerified')
    const victim = await resetThroughMail(w, VICTIM)
    const made = await victim.json('POST', '/v1/status-keys/diary', { value: 'private' })
    const diary = await expectJson(made, 201)
    assert.equal((await attacker.json('GET', '/v1/user/status')).status, 401, 'signed out')
    const mine = await expectJson(await victim.json('GET', '/v1/user/status'), 200)
    assert.deepEqual(
      mine.map((s: { statusId: string }) => s.statusId),
      [diary.id],
    )
  })

  it("through an invitation link (the inviter vouches, the address is not proven): the attacker's key, stream, session and passkey all end at the victim's reset", async (ctx) => {
    const w = await world(ctx)
    const { statusId, token } = await ownerWithLink(w)
    const attacker = await signUp(w, VICTIM, 'Victim', token)
    const made = await attacker.json('POST', '/v1/user/api-keys', {
      scopes: ['status:*', 'keys', 'account'],
    })
    // vouched for: it may make a key
    const key = (await expectJson(made, 201)).key as string
    await plantPasskey(w.t, attacker.id)
    const stream = await SseTestClient.connect(`${w.base}/v1/status/${statusId}/events`, {
      'service-api-key': key,
    })
    assert.equal(stream.response.statusCode, 200)
    assert.equal((await stream.nextEvent()).event, 'status')

    const victim = await resetThroughMail(w, VICTIM)
    // the stream opened with the key ends at once
    const end = await stream.nextEvent()
    assert.equal(end.event, 'unavailable')
    assert.deepEqual(JSON.parse(end.data), { reason: 'unauthorized' })
    await stream.ended
    const diary = await victim.json('POST', '/v1/status-keys/diary', { value: 'private' })
    assert.equal(diary.status, 201)
    assert.equal(await withKey(w, key, '/v1/user/status'), 401, 'the key is revoked')
    assert.equal((await attacker.json('GET', '/v1/user')).status, 401, 'the session ended')
    const passkeys = await expectJson(await victim.json('GET', '/v1/user/passkeys'), 200)
    assert.deepEqual(passkeys, [], 'the passkey is gone')
    const profile = await expectJson(await victim.json('GET', '/v1/user'), 200)
    assert.equal(profile.emailVerified, true)
    // the reset link left the person signed in, with a fresh session: the only one
    const sessions = await expectJson(await victim.json('GET', '/v1/user/sessions'), 200)
    assert.deepEqual(
      sessions.map((s: { method: string; current: boolean }) => [s.method, s.current]),
      [['reset', true]],
    )
    const keys = await expectJson(await victim.json('GET', '/v1/user/api-keys'), 200)
    assert.ok(keys.every((k: { revokedAt: string | null }) => k.revokedAt !== null))
  })

  it('a verification link that proves the address for the first time ends the sessions the account had, and signs in the browser that followed it', async (ctx) => {
    const w = await world(ctx)
    const first = await signUp(w, 'ada@example.com', 'Ada')
    const other = new Browser(w)
    assert.equal(
      (
        await other.json('POST', '/v1/auth/login', {
          email: 'ada@example.com',
          password: GOOD_PASSWORD,
        })
      ).status,
      200,
    )
    const mail = await nextMail(w, 'Confirm your e-mail address')
    // whoever gets it for an account they did not make is told to take it over by a reset
    assert.match(mail.text ?? '', /do not confirm[\s\S]*ask for a password reset/)
    const link = linkIn(mail, `${w.base}/auth/verify/`)
    const clicker = new Browser(w)
    assert.equal((await clicker.follow(link)).status, 200)
    assert.equal((await first.json('GET', '/v1/user')).status, 401)
    assert.equal((await other.json('GET', '/v1/user')).status, 401)
    const me = await expectJson(await clicker.json('GET', '/v1/user'), 200)
    assert.equal(me.emailVerified, true)
    const sessions = await expectJson(await clicker.json('GET', '/v1/user/sessions'), 200)
    assert.deepEqual(
      sessions.map((s: { method: string }) => s.method),
      ['verify'],
    )
  })

  it('a proven account confirming a new address keeps its keys (they were made by whoever proved the old one)', async (ctx) => {
    const w = await world(ctx)
    await signUp(w, 'ada@example.com', 'Ada')
    const ada = new Browser(w)
    await ada.follow(
      linkIn(await nextMail(w, 'Confirm your e-mail address'), `${w.base}/auth/verify/`),
    )
    const key = (await expectJson(await ada.json('POST', '/v1/user/api-keys', {}), 201))
      .key as string
    assert.equal((await ada.json('PATCH', '/v1/user', { email: 'ada@example.org' })).status, 200)
    const clicker = new Browser(w)
    await clicker.follow(
      linkIn(await nextMail(w, 'Confirm your e-mail address'), `${w.base}/auth/verify/`),
    )
    assert.equal(await withKey(w, key, '/v1/checkAuth'), 200)
    assert.equal((await ada.json('GET', '/v1/user')).status, 200, 'and its sessions')
  })

  it(`on every instance: a key another instance holds in its cache stops working when the proof is made elsewhere [${TEST_ENGINE}]`, {
    skip: postgresOnly,
  }, async (ctx) => {
    const database = await testDatabase(ctx)
    const a = await world(ctx, { databaseUrl: database.url })
    // a key cache that never ages: only the announcement can make instance B drop the key
    const b = await world(ctx, { databaseUrl: database.url, keyCacheTtlMs: 600_000, smtp: a.smtp })
    const { statusId, token } = await ownerWithLink(a)
    const attacker = await signUp(a, VICTIM, 'Victim', token)
    const key = (await expectJson(await attacker.json('POST', '/v1/user/api-keys', {}), 201))
      .key as string
    assert.equal(await withKey(b, key, '/v1/checkAuth'), 200, 'B caches the key')
    const stream = await SseTestClient.connect(`${b.base}/v1/status/${statusId}/events`, {
      'service-api-key': key,
    })
    assert.equal((await stream.nextEvent()).event, 'status')
    await resetThroughMail(a, VICTIM)
    // B hears of the revocation: the stream it holds ends, and its cache forgets the key
    const end = await stream.nextEvent()
    assert.equal(end.event, 'unavailable')
    await stream.ended
    assert.equal(await withKey(b, key, '/v1/checkAuth'), 401)
  })
})
