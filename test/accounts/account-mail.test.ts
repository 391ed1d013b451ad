import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { describe, it, type TestContext } from 'node:test'
import type { ParsedMail } from 'mailparser'
import { createMailer } from '../../src/lib/mailer.ts'
import { MAIL_LIMITS } from '../../src/modules/accounts/account-mail.service.ts'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts'

// E-mail (docs/accounts.md#e-mail; docs/api.md#e-mail-verification-password-reset-and-sign-in-links):
// a real SMTP server receives every message, the test reads the link out of it and follows it
// over a real socket, as a browser does: the GET page first (it changes nothing), then its
// form's POST.

const NEW_PASSWORD = 'a brand new passphrase 7'
const HOUR = 60 * 60 * 1000

interface MailWorld {
  t: TestApp
  smtp: TestSmtpServer
  clock: TestClock
  /** http://127.0.0.1:<port>: the app on a real socket, no PUBLIC_URL (links use this). */
  base: string
}

async function mailWorld(ctx: TestContext, { logs }: { logs?: string[] } = {}): Promise<MailWorld> {
  const smtp = await startSmtpServer(ctx)
  const clock = testClock()
  const t = await makeApp(ctx, {
    deps: {
      signup: 'open',
      clock,
      mailer: createMailer(smtp.url, 'statusd <statusd@status.example.com>'),
      ...(logs && {
        logger: {
          level: 'info',
          stream: new Writable({
            write(chunk, _encoding, done) {
              logs.push(String(chunk))
              done()
            },
          }),
        },
      }),
    },
  })
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = t.app.server.address() as AddressInfo
  return { t, smtp, clock, base: `http://127.0.0.1:${port}` }
}

/** A browser's cookie jar of one cookie, statusd_session. */
class Browser {
  cookie: string | undefined
  readonly base: string
  constructor(base: string) {
    this.base = base
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(url.startsWith('http') ? url : this.base + url, {
      redirect: 'manual',
      ...init,
      headers: {
        ...(this.cookie && { cookie: `statusd_session=${this.cookie}` }),
        ...(init.headers as Record<string, string>),
      },
    })
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';')
      if (pair.startsWith('statusd_session=')) this.cookie = pair.slice('statusd_session='.length)
    }
    return res
  }

  /** Opens a link: the GET a click makes (from a mail client: another site). */
  open(url: string): Promise<Response> {
    return this.fetch(url, { headers: { 'sec-fetch-site': 'cross-site' } })
  }

  /** Submits the page's form, as the browser does: same origin, urlencoded. */
  submit(url: string, fields: Record<string, string> = {}): Promise<Response> {
    return this.fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: this.base,
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams(fields).toString(),
    })
  }

  json(method: string, url: string, body?: unknown): Promise<Response> {
    return this.fetch(url, {
      method,
      headers: {
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(method !== 'GET' && { origin: this.base }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
  }
}

async function signUp(w: MailWorld, email = 'ada@example.com', name = 'Ada'): Promise<Browser> {
  const browser = new Browser(w.base)
  const res = await browser.json('POST', '/v1/auth/signup', {
    email,
    name,
    password: GOOD_PASSWORD,
  })
  assert.equal(res.status, 201, await res.text())
  return browser
}

const recipients = (mail: ParsedMail): string[] =>
  [mail.to]
    .flat()
    .flatMap((to) => to?.value ?? [])
    .map((a) => (a.address ?? '').toLowerCase())

// biome-ignore lint/suspicious/noExplicitAny: a parsed JSON answer, every use checked by an assertion
const bodyOf = (res: Response): Promise<any> => res.json()
/** The signed-in browser's profile. */
const profileOf = async (browser: Browser) => bodyOf(await browser.json('GET', '/v1/user'))

const tokenOf = (link: string) => link.slice(link.lastIndexOf('/') + 1)

describe('e-mail verification', () => {
  it('sign-up with SMTP: the account is authenticated, a link arrives, its page changes nothing, its button verifies', async (ctx) => {
    const w = await mailWorld(ctx)
    const browser = await signUp(w)
    let me = await profileOf(browser)
    assert.equal(me.authLevel, 'authenticated', 'with SMTP the address is verified first')
    assert.equal(me.emailVerified, false)

    const mail = await w.smtp.next()
    assert.deepEqual(recipients(mail), ['ada@example.com'])
    assert.equal(mail.subject, 'Confirm your e-mail address')
    assert.deepEqual(mail.from?.value, [{ name: 'statusd', address: 'statusd@status.example.com' }])
    const link = linkIn(mail, `${w.base}/auth/verify/`)
    assert.match(tokenOf(link), /^sdl_[A-Za-z0-9]{43}$/)

    // a mail scanner (or the person) opening it twice: a page with a button, nothing done
    for (let i = 0; i < 2; i++) {
      const page = await new Browser(w.base).open(link)
      assert.equal(page.status, 200)
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
      assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/)
      assert.equal(
        page.headers.get('referrer-policy'),
        'same-origin',
        'no Referer to another site; Origin on its own form post',
      )
      assert.equal(page.headers.get('cache-control'), 'no-store')
      const body = await page.text()
      assert.match(
        body,
        /<form method="post"><p><button type="submit">Confirm my address<\/button>/,
      )
    }
    me = await profileOf(browser)
    assert.equal(me.authLevel, 'authenticated', 'opening the link changed nothing')

    // the button signs in the browser that pressed it; the account's first proof ends the
    // sessions it had (docs/accounts.md#e-mail)
    const clicker = new Browser(w.base)
    const done = await clicker.submit(link)
    assert.equal(done.status, 200)
    assert.match(await done.text(), /ada@example\.com is confirmed/)
    me = await profileOf(clicker)
    assert.equal(me.authLevel, 'verified')
    assert.equal(me.emailVerified, true)
    assert.equal((await browser.json('GET', '/v1/user')).status, 401, 'the older session ended')

    // used: the page says so, and so does the API
    assert.equal((await new Browser(w.base).open(link)).status, 410)
    assert.equal((await new Browser(w.base).submit(link)).status, 410)
    const again = await w.t.request(null, 'POST', '/v1/auth/verify-email', { token: tokenOf(link) })
    assert.equal(again.statusCode, 410)
    assert.equal(again.json().errorCode, 'gone')
    assert.equal(w.smtp.messages().length, 1)
  })

  it('POST /v1/auth/verify-email verifies with the token and answers the profile; forged: 404; expired (24 h): 410', async (ctx) => {
    const w = await mailWorld(ctx)
    await signUp(w, 'bo@example.com', 'Bo')
    const first = tokenOf(linkIn(await w.smtp.next(), `${w.base}/auth/verify/`))

    let res = await w.t.request(null, 'POST', '/v1/auth/verify-email', {
      token: `sdl_${'x'.repeat(43)}`,
    })
    assert.equal(res.statusCode, 404)
    assert.equal(res.json().errorCode, 'notFound')
    res = await w.t.request(null, 'POST', '/v1/auth/verify-email', { token: 'sdl_', extra: 1 })
    assert.equal(res.statusCode, 400, 'unknown properties are refused')

    w.clock.advance(24 * HOUR)
    res = await w.t.request(null, 'POST', '/v1/auth/verify-email', { token: first })
    assert.equal(res.statusCode, 410, 'a day later the link has expired')

    // a new link (the resend route), followed in time
    const signIn = new Browser(w.base)
    assert.equal(
      (
        await signIn.json('POST', '/v1/auth/login', {
          email: 'bo@example.com',
          password: GOOD_PASSWORD,
        })
      ).status,
      200,
    )
    const resend = await signIn.json('POST', '/v1/user/email/verification')
    assert.equal(resend.status, 202)
    const sent = await bodyOf(resend)
    assert.equal(sent.email, 'bo@example.com')
    assert.equal(sent.expiresAt, new Date(w.clock.now() + 24 * HOUR).toISOString())
    const second = tokenOf(linkIn(await w.smtp.next(), `${w.base}/auth/verify/`))
    const verifier = new Browser(w.base)
    const verified = await verifier.json('POST', '/v1/auth/verify-email', { token: second })
    assert.equal(verified.status, 200)
    const body = await bodyOf(verified)
    assert.equal(body.authLevel, 'verified')
    assert.equal(body.email, 'bo@example.com')
    assert.ok(verifier.cookie, 'the verifying client is signed in')
    // confirmed: nothing to resend
    const none = await verifier.json('POST', '/v1/user/email/verification')
    assert.equal(none.status, 409)
  })

  it('resending is limited per account (429 past 5 an hour), and only the latest link works', async (ctx) => {
    const w = await mailWorld(ctx)
    const browser = await signUp(w, 'cy@example.com', 'Cy')
    const links = [linkIn(await w.smtp.next(), `${w.base}/auth/verify/`)]
    for (let i = 1; i < MAIL_LIMITS.verificationsPerHour; i++) {
      assert.equal((await browser.json('POST', '/v1/user/email/verification')).status, 202)
      links.push(linkIn(await w.smtp.next(), `${w.base}/auth/verify/`))
    }
    const refused = await browser.json('POST', '/v1/user/email/verification')
    assert.equal(refused.status, 429)
    assert.equal((await bodyOf(refused)).errorCode, 'rateLimited')
    for (const old of links.slice(0, -1))
      assert.equal((await new Browser(w.base).open(old)).status, 410)
    assert.equal((await new Browser(w.base).submit(links.at(-1) as string)).status, 200)
    w.clock.advance(HOUR)
    assert.equal(w.smtp.messages().length, MAIL_LIMITS.verificationsPerHour)
  })

  it('an e-mail change sends the link to the NEW address; the address changes only when it is followed', async (ctx) => {
    const w = await mailWorld(ctx)
    const browser = await signUp(w)
    await w.smtp.next() // the sign-up's own link
    const res = await browser.json('PATCH', '/v1/user', { email: 'Ada@Example.org' })
    assert.equal(res.status, 200)
    const profile = await bodyOf(res)
    assert.equal(profile.email, 'ada@example.com', 'not changed yet')
    assert.equal(profile.pendingEmail, 'Ada@Example.org')

    const mail = await w.smtp.next()
    assert.deepEqual(recipients(mail), ['ada@example.org'])
    const link = linkIn(mail, `${w.base}/auth/verify/`)
    assert.equal((await profileOf(browser)).email, 'ada@example.com')
    // the old address can still sign in
    const other = new Browser(w.base)
    assert.equal(
      (
        await other.json('POST', '/v1/auth/login', {
          email: 'ada@example.com',
          password: GOOD_PASSWORD,
        })
      ).status,
      200,
    )

    const clicker = new Browser(w.base)
    assert.equal((await clicker.submit(link)).status, 200)
    const me = await profileOf(clicker)
    assert.equal(me.email, 'Ada@Example.org')
    assert.equal(me.emailVerified, true)
    assert.equal(me.authLevel, 'verified')
    assert.equal(
      (
        await other.json('POST', '/v1/auth/login', {
          email: 'ada@example.org',
          password: GOOD_PASSWORD,
        })
      ).status,
      200,
    )
  })

  it('the address is checked again when the link is followed: taken meanwhile, 409 and nothing changes', async (ctx) => {
    const w = await mailWorld(ctx)
    const ada = await signUp(w)
    await w.smtp.next()
    assert.equal((await ada.json('PATCH', '/v1/user', { email: 'shared@example.com' })).status, 200)
    const link = linkIn(await w.smtp.next(), `${w.base}/auth/verify/`)
    // someone else signs up with it before Ada follows her link
    await signUp(w, 'SHARED@example.com', 'Eve')
    const res = await new Browser(w.base).submit(link)
    assert.equal(res.status, 409)
    assert.match(await res.text(), /This address is taken/)
    const json = await w.t.request(null, 'POST', '/v1/auth/verify-email', { token: tokenOf(link) })
    assert.equal(json.statusCode, 409)
    assert.equal(json.json().errorCode, 'conflict')
    assert.equal((await profileOf(ada)).email, 'ada@example.com')
  })

  it('a taken address is refused at once too (409), and no link is mailed', async (ctx) => {
    const w = await mailWorld(ctx)
    await signUp(w, 'one@example.com', 'One')
    const two = await signUp(w, 'two@example.com', 'Two')
    await w.smtp.next()
    await w.smtp.next()
    const res = await two.json('PATCH', '/v1/user', { email: 'ONE@example.com', name: 'Renamed' })
    assert.equal(res.status, 409)
    assert.equal((await profileOf(two)).name, 'Two', 'nothing changed')
    await w.t.close()
    assert.equal(w.smtp.messages().length, 2)
  })
})

describe('password reset', () => {
  it('end to end: 202, a one-hour link, a new password; every old session ends; the new password works, the old does not', async (ctx) => {
    const w = await mailWorld(ctx)
    const first = await signUp(w)
    await w.smtp.next()
    const second = new Browser(w.base)
    assert.equal(
      (
        await second.json('POST', '/v1/auth/login', {
          email: 'ada@example.com',
          password: GOOD_PASSWORD,
        })
      ).status,
      200,
    )

    const asked = await new Browser(w.base).json('POST', '/v1/auth/password-reset', {
      email: 'ADA@example.com',
    })
    assert.equal(asked.status, 202)
    const mail = await w.smtp.next()
    assert.deepEqual(recipients(mail), ['ada@example.com'])
    assert.equal(mail.subject, 'Reset your password')
    const link = linkIn(mail, `${w.base}/auth/reset/`)

    const browser = new Browser(w.base)
    const page = await browser.open(link)
    assert.equal(page.status, 200)
    const form = await page.text()
    assert.match(
      form,
      /<input id="password" name="password" type="password" autocomplete="new-password"/,
    )

    // a password the rules refuse: the form again, saying why; the link still works
    const weak = await browser.submit(link, { password: 'QWERTY123456' })
    assert.equal(weak.status, 400)
    assert.match(await weak.text(), /list of common passwords/)

    const done = await browser.submit(link, { password: NEW_PASSWORD })
    assert.equal(done.status, 303)
    assert.equal(done.headers.get('location'), '/')
    assert.ok(browser.cookie, 'this browser is signed in')
    const me = await browser.json('GET', '/v1/user')
    assert.equal(me.status, 200)
    assert.equal((await bodyOf(me)).authLevel, 'verified', 'the link reached the address: verified')

    for (const old of [first, second])
      assert.equal((await old.json('GET', '/v1/user')).status, 401, 'old sessions ended')
    const login = (password: string) =>
      new Browser(w.base).json('POST', '/v1/auth/login', { email: 'ada@example.com', password })
    assert.equal((await login(GOOD_PASSWORD)).status, 401)
    assert.equal((await login(NEW_PASSWORD)).status, 200)
    assert.equal((await new Browser(w.base).open(link)).status, 410, 'used')
  })

  it('an unknown address gets the same 202 and the same body, and no message is sent', async (ctx) => {
    const w = await mailWorld(ctx)
    await signUp(w)
    await w.smtp.next()
    const unknown = await w.t.request(null, 'POST', '/v1/auth/password-reset', {
      email: 'nobody@example.com',
    })
    const known = await w.t.request(null, 'POST', '/v1/auth/password-reset', {
      email: 'ada@example.com',
    })
    assert.equal(unknown.statusCode, 202)
    assert.equal(known.statusCode, 202)
    assert.deepEqual(unknown.json(), known.json())
    assert.deepEqual(recipients(await w.smtp.next()), ['ada@example.com'])
    // closing waits for every message under way: none went to the unknown address
    await w.t.close()
    assert.equal(w.smtp.messages().length, 2)
  })

  it('JSON confirm: sets the password and signs in; expired (1 h): 410; forged: 404; weak: 400 and the link still works', async (ctx) => {
    const w = await mailWorld(ctx)
    await signUp(w)
    await w.smtp.next()
    const ask = () =>
      w.t.request(null, 'POST', '/v1/auth/password-reset', { email: 'ada@example.com' })
    assert.equal((await ask()).statusCode, 202)
    const expired = tokenOf(linkIn(await w.smtp.next(), `${w.base}/auth/reset/`))
    w.clock.advance(HOUR)
    const confirm = (token: string, password = NEW_PASSWORD) =>
      w.t.request(null, 'POST', '/v1/auth/password-reset/confirm', { token, password })
    let res = await confirm(expired)
    assert.equal(res.statusCode, 410)
    assert.equal(res.json().errorCode, 'gone')
    res = await confirm(`sdl_${'A'.repeat(43)}`)
    assert.equal(res.statusCode, 404)
    assert.equal(res.json().errorCode, 'notFound')

    w.clock.advance(MAIL_LIMITS.resetIntervalMs)
    assert.equal((await ask()).statusCode, 202)
    const token = tokenOf(linkIn(await w.smtp.next(), `${w.base}/auth/reset/`))
    res = await confirm(token, 'short')
    assert.equal(res.statusCode, 400)
    res = await confirm(token, 'QWERTY123456')
    assert.equal(res.statusCode, 400)
    assert.equal(res.json().errors[0].field, 'password')
    res = await confirm(token)
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().email, 'ada@example.com')
    assert.match(String(res.headers['set-cookie']), /^statusd_session=sds_/)
  })

  it('two uses of one link at once: exactly one sets the password', async (ctx) => {
    const w = await mailWorld(ctx)
    await signUp(w)
    await w.smtp.next()
    await w.t.request(null, 'POST', '/v1/auth/password-reset', { email: 'ada@example.com' })
    const token = tokenOf(linkIn(await w.smtp.next(), `${w.base}/auth/reset/`))
    const results = await Promise.all(
      ['one passphrase for me', 'another passphrase too', 'a third passphrase here'].map(
        (password) =>
          new Browser(w.base).json('POST', '/v1/auth/password-reset/confirm', { token, password }),
      ),
    )
    const statuses = results.map((r) => r.status).sort()
    assert.deepEqual(statuses, [200, 410, 410])
  })

  it('a link sent before the account changed its address no longer works (410)', async (ctx) => {
    const w = await mailWorld(ctx)
    const ada = await signUp(w)
    await w.t.request(null, 'POST', '/v1/auth/password-reset', { email: 'ada@example.com' })
    const mails = [await w.smtp.next(), await w.smtp.next()]
    const verify = mails.find((m) => m.subject === 'Confirm your e-mail address') as ParsedMail
    const reset = mails.find((m) => m.subject === 'Reset your password') as ParsedMail
    // following the link signs in its browser (the first proof ended the sign-up's session)
    const clicker = new Browser(w.base)
    await clicker.submit(linkIn(verify, `${w.base}/auth/verify/`))
    assert.equal((await ada.json('GET', '/v1/user')).status, 401)
    assert.equal(
      (await clicker.json('PATCH', '/v1/user', { email: 'ada@example.org' })).status,
      200,
    )
    await new Browser(w.base).submit(linkIn(await w.smtp.next(), `${w.base}/auth/verify/`))
    const res = await new Browser(w.base).submit(linkIn(reset, `${w.base}/auth/reset/`), {
      password: NEW_PASSWORD,
    })
    assert.equal(res.status, 410)
  })

  it('mail bombing: one address gets one link per 5 minutes (later asks: 202, nothing sent); one client may ask 10 times an hour, then 429', async (ctx) => {
    const w = await mailWorld(ctx)
    await signUp(w)
    await w.smtp.next()
    const ask = () =>
      w.t.request(null, 'POST', '/v1/auth/password-reset', { email: 'ada@example.com' })
    assert.equal((await ask()).statusCode, 202)
    await w.smtp.next()
    for (let i = 1; i < MAIL_LIMITS.resetRequestsPerClient; i++)
      assert.equal((await ask()).statusCode, 202)
    const refused = await ask()
    assert.equal(refused.statusCode, 429)
    assert.equal(refused.json().errorCode, 'rateLimited')
    assert.ok(Number(refused.headers['retry-after']) > 0)
    w.clock.advance(HOUR + 1)
    assert.equal((await ask()).statusCode, 202, 'the client window has passed')
    assert.deepEqual(
      recipients(await w.smtp.next()),
      ['ada@example.com'],
      'and the address interval',
    )
    await w.t.close()
    assert.equal(w.smtp.messages().length, 3, 'sign-up, and one reset link per interval')
  })

  it('a cross-site form post is refused (403) and the link still works', async (ctx) => {
    const w = await mailWorld(ctx)
    await signUp(w)
    await w.smtp.next()
    await w.t.request(null, 'POST', '/v1/auth/password-reset', { email: 'ada@example.com' })
    const link = linkIn(await w.smtp.next(), `${w.base}/auth/reset/`)
    const attacker = new Browser(w.base)
    const res = await attacker.fetch(link, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
      },
      body: `password=${encodeURIComponent(NEW_PASSWORD)}`,
    })
    assert.equal(res.status, 403)
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
    assert.equal(attacker.cookie, undefined)
    assert.equal((await new Browser(w.base).open(link)).status, 200, 'still valid')
  })

  it('no SMTP password in the log when sending fails', async (ctx) => {
    const smtp = await startSmtpServer(ctx, {
      credentials: 'statusd:Sup3r-Secret-Pa55',
      refuseLogin: true,
    })
    const logs: string[] = []
    const t = await makeApp(ctx, {
      deps: {
        signup: 'open',
        mailer: createMailer(smtp.url, 'statusd <statusd@example.com>'),
        logger: {
          level: 'trace',
          stream: new Writable({
            write(chunk, _encoding, done) {
              logs.push(String(chunk))
              done()
            },
          }),
        },
      },
    })
    const res = await t.request(null, 'POST', '/v1/auth/signup', {
      email: 'ada@example.com',
      name: 'Ada',
      password: GOOD_PASSWORD,
    })
    assert.equal(res.statusCode, 201, 'a failed send is no failed sign-up')
    assert.equal(
      (await t.request(null, 'POST', '/v1/auth/password-reset', { email: 'ada@example.com' }))
        .statusCode,
      202,
    )
    await t.close()
    const log = logs.join('')
    assert.match(log, /e-mail not sent \(e-mail verification\)/)
    assert.match(log, /e-mail not sent \(password reset\)/)
    assert.deepEqual(
      smtp.logins().map((l) => l.password),
      ['Sup3r-Secret-Pa55', 'Sup3r-Secret-Pa55'],
      'the password was used',
    )
    for (const secret of ['Sup3r-Secret-Pa55', Buffer.from('Sup3r-Secret-Pa55').toString('base64')])
      assert.ok(!log.includes(secret), 'never logged')
    assert.doesNotMatch(log, /sdl_[A-Za-z0-9]{43}/, 'nor a link')
  })
})

describe('without SMTP', () => {
  it('password reset answers 501 emailUnavailable (the same for every address), naming statusd user link', async (ctx) => {
    const t = await makeApp(ctx, { deps: { signup: 'open' } })
    for (const email of ['ada@example.com', 'nobody@example.com']) {
      const res = await t.request(null, 'POST', '/v1/auth/password-reset', { email })
      assert.equal(res.statusCode, 501)
      assert.equal(res.json().errorCode, 'emailUnavailable')
      assert.match(res.json().message, /statusd user link/)
    }
    const user = await t.user({ verified: false })
    const resend = await t.request(user, 'POST', '/v1/user/email/verification')
    assert.equal(resend.statusCode, 409, 'no address to verify')
  })
})
