import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it, type TestContext } from 'node:test'
import type { Page } from 'playwright-core'
import { createMailer } from '../../src/lib/mailer.ts'
import { createSignInLink } from '../../src/modules/users/sign-in-links.service.ts'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { chromiumMissing, launchChromium } from '../helpers/browser.ts'
import { testClock } from '../helpers/clock.ts'
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts'

// docs/security.md (link pages): every page a mailed or printed link opens works when its
// button is pressed, in a real browser. The pages once sent `Referrer-Policy: no-referrer`,
// under which Chromium posts their forms with `Origin: null`, and the cross-site check
// refused every button (403). The check stays: a post from another site is still refused.

const WAIT = { timeout: 15_000 }

type Styled = { getComputedStyle(el: unknown): { borderRadius: string } }

interface World {
  t: TestApp
  smtp: TestSmtpServer
  base: string
}

async function world(ctx: TestContext): Promise<World> {
  const smtp = await startSmtpServer(ctx)
  const t = await makeApp(ctx, {
    deps: {
      signup: 'open',
      clock: testClock(),
      mailer: createMailer(smtp.url, 'statusd <statusd@status.example.com>'),
    },
  })
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = t.app.server.address() as AddressInfo
  return { t, smtp, base: `http://127.0.0.1:${port}` }
}

/** Signs Ada up through the API (she then has an unconfirmed address and a mail about it). */
async function signUp(w: World): Promise<void> {
  const res = await w.t.request(null, 'POST', '/v1/auth/signup', {
    email: 'ada@example.com',
    name: 'Ada',
    password: GOOD_PASSWORD,
  })
  assert.equal(res.statusCode, 201, res.body)
}

interface Scenario {
  page: string
  /** Makes the link, as the service hands it out (a mail, or the operator's CLI). */
  link(w: World): Promise<string>
  /** What the person does on the page before the button. */
  fill?(page: Page): Promise<void>
  button: string
  /** The answer to the button's post, and the heading of the page it leads to. */
  status: number
  heading: string
  signedIn: boolean
}

const SCENARIOS: Scenario[] = [
  {
    page: '/auth/link (statusd user link)',
    async link(w) {
      const user = await w.t.user()
      return (await createSignInLink(w.t.database.db, testClock(), user.id, w.base)).url
    },
    button: 'Sign in',
    status: 303,
    heading: '',
    signedIn: true,
  },
  {
    page: '/auth/reset (mailed password reset)',
    async link(w) {
      await signUp(w)
      await w.smtp.next() // the verification mail
      const res = await w.t.request(null, 'POST', '/v1/auth/password-reset', {
        email: 'ada@example.com',
      })
      assert.equal(res.statusCode, 202, res.body)
      return linkIn(await w.smtp.next(), `${w.base}/auth/reset/`)
    },
    fill: (page) => page.getByLabel('New password').fill('a brand new passphrase 7'),
    button: 'Set the new password',
    status: 303,
    heading: '',
    signedIn: true,
  },
  {
    page: '/auth/verify (mailed e-mail verification)',
    async link(w) {
      await signUp(w)
      return linkIn(await w.smtp.next(), `${w.base}/auth/verify/`)
    },
    button: 'Confirm my address',
    status: 200,
    heading: 'Address confirmed',
    signedIn: false,
  },
  {
    page: "/auth/channel (mailed notification channel's confirmation)",
    async link(w) {
      const user = await w.t.user()
      const res = await w.t.request(user, 'POST', '/v1/user/channels', {
        type: 'email',
        config: { address: 'ops@example.org' },
      })
      assert.equal(res.statusCode, 201, res.body)
      return linkIn(await w.smtp.next(), `${w.base}/auth/channel/`)
    },
    button: 'Confirm the address',
    status: 200,
    heading: 'Address confirmed',
    signedIn: false,
  },
]

describe('every page a mailed or printed link opens works when its button is pressed', {
  skip: chromiumMissing(),
  timeout: 120_000,
}, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium({ viewport: { width: 390, height: 844 } })
  })
  after(async () => {
    await browser?.close()
  })

  for (const s of SCENARIOS) {
    it(`${s.page}: the button's post comes from this site, and does its work`, async (ctx) => {
      const w = await world(ctx)
      const link = await s.link(w)
      await browser.context.clearCookies()
      const page = await browser.context.newPage()
      ctx.after(() => page.close())
      const problems: string[] = []
      page.on('console', (msg) => {
        if (msg.type() === 'error') problems.push(`console: ${msg.text()}`)
      })
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))

      // opened from a mail client: a navigation from another site
      const opened = await page.goto(link, { referer: 'https://mail.example.net/' })
      assert.equal(opened?.status(), 200)
      const corner = await page.$eval(
        'button, input',
        (el) => (globalThis as unknown as Styled).getComputedStyle(el).borderRadius,
      )
      await s.fill?.(page)
      const [posted] = await Promise.all([
        page.waitForRequest((r) => r.method() === 'POST' && r.url() === link, WAIT),
        page.getByRole('button', { name: s.button }).click(),
      ])
      const answer = await posted.response()
      assert.equal(await posted.headerValue('origin'), w.base, 'the post names its own origin')
      assert.equal(answer?.status(), s.status, s.page)
      // the token in the page's URL still goes to no other site as a Referer
      assert.equal(await opened?.headerValue('referrer-policy'), 'same-origin')
      // styled by the service's own stylesheets (the CSP allows no other)
      assert.notEqual(corner, '0px', 'the page loaded its stylesheets')
      if (s.signedIn) {
        await page.waitForURL(`${w.base}/`, WAIT)
        const cookies = await browser.context.cookies(w.base)
        assert.ok(
          cookies.some((c) => c.name === 'statusd_session'),
          'signed in on this browser',
        )
      } else {
        await page.getByRole('heading', { name: s.heading }).waitFor(WAIT)
      }
      assert.deepEqual(problems, [])
    })
  }

  it('a post from another site is still refused (403), with a page that says what to do', async (ctx) => {
    const w = await world(ctx)
    const user = await w.t.user()
    const { url } = await createSignInLink(w.t.database.db, testClock(), user.id, w.base)
    const res = await fetch(url, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    })
    assert.equal(res.status, 403)
    const body = await res.text()
    assert.match(body, /This form must be sent from this site/)
    assert.match(body, /press the button on the page it opens/)
    assert.doesNotMatch(body, /signed in by cookie/)
  })
})
