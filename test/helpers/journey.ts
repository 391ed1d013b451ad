import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { before, type TestContext } from 'node:test'
import type { ParsedMail } from 'mailparser'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { type AxeOptions, expectNoAxeViolations } from './axe.ts'
import { chromiumMissing, fileChromium } from './browser.ts'
import { defer, tempDir } from './cleanup.ts'
import { browserBreach, remoteContract, watchFetches } from './contract.ts'
import { asLogLine, BIN, type Proc, ROOT, runToEnd, start, statusdEnv } from './processes.ts'
import { linkIn, startSmtpServer, type TestSmtpServer } from './smtp.ts'
import { freePort } from './webauthn.ts'

// Journeys (docs/architecture.md#tests): what a person does, done as a person does it.
//
//   const chromium = journeyBrowser()               // one Chromium for the file
//   it('…', { skip: chromiumMissing(), timeout: JOURNEY_TIMEOUT }, async (t) => {
//     const j = await startJourney(t, chromium(), { smtp: true })
//     const page = await j.open('phone')              // a fresh profile at 390×844
//     await j.setUp(page, { name, email, password })  // the printed setup link, filled in
//     await page.goto(j.firstSetupLink())             // parsed from the server's own output
//     await j.check(page, 'the board after signing in')  // axe, and nothing went wrong so far
//     const link = j.linkIn(await j.mail(), '/auth/reset/')  // the real SMTP server's next mail
//     j.expectResponse(401, '/v1/auth/login')        // a 4xx the journey means to cause
//   })
//
// The server is `statusd serve` started as `npm start` starts it (package.json's command
// line), in a folder of its own (its default `./data/statusd.db` lands there) on a free port,
// e-mailing the real test SMTP server when asked. Every page of every profile fails the
// journey on a console error, an uncaught page error, a CSP violation, a failed request, a
// 4xx/5xx answer the journey did not announce with `expectResponse`, and (at each `check`)
// an axe violation: the first such problem closes its profile, so what the journey waits for
// fails at once with the problem as its reason, and the test's end names every problem. The CLI (`j.cli('user', 'link', …)`) runs against the same
// data and address as the server, as an operator's shell in that folder would.

/** Bound for one journey; a bound, never a timing assertion. */
export const JOURNEY_TIMEOUT = 300_000

export const SIZES = {
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
  desktop: { viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
} as const
export type Size = keyof typeof SIZES

/**
 * The test file's one Chromium (browser.ts fileChromium), launched before its first test and
 * closed after its last.
 */
export function journeyBrowser(): () => Browser {
  let browser: Browser | undefined
  before(async () => {
    if (!chromiumMissing()) browser = await fileChromium()
  })
  return () => {
    assert.ok(browser, 'journeyBrowser(): Chromium is not running (skip with chromiumMissing())')
    return browser
  }
}

export interface Journey {
  /** The server's base URL: its PUBLIC_URL, else the address of its "statusd ready" line. */
  url: string
  /** The server process: its output lines (`stdout`, `stderr`), `waitForLine`, `stop`. */
  server: Proc
  /** The one-time setup link the first start printed (docs/app.md#the-first-start). */
  firstSetupLink(): string
  /**
   * Opens the setup link on `page` (signed out: the app's 401 from /v1/user expected) and
   * completes it with a password: signed in, on the board.
   */
  setUp(page: Page, who: { name: string; email: string; password: string }): Promise<void>
  /** The API key the first start printed. */
  firstApiKey(): string
  /** A new browser profile (cookies of its own) at `size`, with one page, watched. */
  open(size: Size): Promise<Page>
  /** Lets answers with `status` to requests whose path matches `path` pass, from now on. */
  expectResponse(status: number, path: string | RegExp): void
  /** Fails on what went wrong so far on any page, then on axe's findings on `page`. */
  check(page: Page, label: string, axe?: AxeOptions): Promise<void>
  /** The next mail the test SMTP server received (waits for it); `smtp: true` only. */
  mail(): Promise<ParsedMail>
  /** The first link in `mail` to the server under `pathPrefix`, e.g. `/auth/reset/`. */
  linkIn(mail: ParsedMail, pathPrefix: string): string
  /** Runs `statusd <args…>` against the server's data and address; exit 0 asserted. */
  cli(...args: string[]): Promise<{ stdout: string; stderr: string }>
  /** The SMTP server, when asked for. */
  smtp: TestSmtpServer | null
}

/** package.json's `npm start` command line, run with this Node (the server's flags). */
function npmStartArgs(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
  const words = String(pkg.scripts.start).split(/\s+/)
  assert.equal(words[0], 'node', `npm start runs node: ${pkg.scripts.start}`)
  return words.slice(1).map((word) => (word === 'bin/statusd.js' ? BIN : word))
}

const LINK_LINE = /^\s+(https?:\/\/\S+\/setup\/\S+)\s*$/
const KEY_LINE = /^\s+(sdk_[A-Za-z0-9]+)\s*$/

/** Chromium's console line for an answer with an error status: judged as the answer. */
const STATUS_CONSOLE = /^Failed to load resource: the server responded with a status of \d+/

export async function startJourney(
  t: TestContext,
  browser: Browser,
  options: {
    /** Mail through the real test SMTP server (`SMTP_URL`); read with `j.mail()`. */
    smtp?: boolean
    /**
     * Reached as `http://localhost:<port>` with `PUBLIC_URL` naming it, as an operator sets
     * it up (passkeys need a host name, not an address); otherwise `PORT=0`, no PUBLIC_URL.
     */
    localhost?: boolean
    /** More of the server's settings, e.g. `{ SIGNUP: 'open' }`. */
    env?: Record<string, string>
  } = {},
): Promise<Journey> {
  const dir = tempDir(t, 'statusd-journey-')
  const smtp = options.smtp ? await startSmtpServer(t) : null
  const publicUrl = options.localhost ? `http://localhost:${await freePort()}` : null
  const env = statusdEnv({
    PORT: publicUrl ? new URL(publicUrl).port : '0',
    HOST: '127.0.0.1',
    ...(publicUrl && { PUBLIC_URL: publicUrl }),
    ...(smtp && { SMTP_URL: smtp.url }),
    ...options.env,
  })
  const server = start(t, process.execPath, npmStartArgs(), env, dir)
  const ready = asLogLine(
    await server.waitForLine(
      (line) => asLogLine(line)?.msg === 'statusd ready',
      'the "statusd ready" line',
    ),
  )
  const url = publicUrl ?? String(ready?.address)
  // the banner comes with the first start, written next to the ready line (either first)
  const linkLine = await server.waitForLine((line) => LINK_LINE.test(line), 'the setup link')
  const keyLine = server.stdout.find((line) => KEY_LINE.test(line))

  // every answer of the server is checked against its OpenAPI document (contract.ts): in the
  // browser, as a problem of the journey, and through `fetch`
  const contract = remoteContract(String(ready?.address))
  defer(
    t,
    watchFetches(url, () => contract),
  )
  const problems: string[] = []
  const expected: { status: number; path: string | RegExp }[] = []
  const contexts: BrowserContext[] = []
  let closing = false
  const report = (context: BrowserContext, what: string) => {
    if (closing) return
    problems.push(what)
    // fails at once: whatever the journey waits for on this profile is given up, with why
    void context.close({ reason: `the journey went wrong: ${what}` })
  }
  const allowed = (status: number, pathname: string) =>
    expected.some(
      (e) =>
        e.status === status &&
        (typeof e.path === 'string' ? pathname === e.path : e.path.test(pathname)),
    )
  const takeProblems = (when: string) => {
    const seen = problems.splice(0)
    assert.deepEqual(seen, [], `went wrong in the browser ${when}:\n${seen.join('\n')}`)
  }
  // closed before the server is stopped (cleanups run last-registered first)
  defer(t, async () => {
    closing = true
    for (const context of contexts) await context.close()
    if (problems.length) takeProblems('after the last check')
  })

  async function open(size: Size): Promise<Page> {
    const context = await browser.newContext({
      ...SIZES[size],
      locale: 'en-GB',
      timezoneId: 'UTC',
      colorScheme: 'light',
    })
    contexts.push(context)
    await context.exposeBinding('__journeyCsp', (_source, text: string) =>
      report(context, `CSP violation: ${text}`),
    )
    await context.addInitScript(() => {
      const g = globalThis as unknown as {
        document: { addEventListener(type: string, fn: (e: Record<string, string>) => void): void }
        __journeyCsp(text: string): void
      }
      g.document.addEventListener('securitypolicyviolation', (e) =>
        g.__journeyCsp(`${e.violatedDirective} blocked ${e.blockedURI} on ${e.documentURI}`),
      )
    })
    context.on('console', (msg) => {
      if (msg.type() === 'error' && !STATUS_CONSOLE.test(msg.text()))
        report(context, `console error on ${msg.page()?.url()}: ${msg.text()}`)
    })
    context.on('weberror', (err) => report(context, `page error: ${err.error().stack}`))
    context.on('requestfailed', (request) => {
      const failure = request.failure()?.errorText ?? ''
      // the page itself let go of it (a navigation away, a stream it closed): not an error
      if (failure === 'net::ERR_ABORTED') return
      report(context, `request failed: ${request.method()} ${request.url()}: ${failure}`)
    })
    context.on('response', (response) => {
      void browserBreach(contract, new URL(url).origin, response).then((breach) => {
        if (breach) report(context, breach)
      })
      const status = response.status()
      if (status < 400) return
      const { pathname } = new URL(response.url())
      if (!allowed(status, pathname))
        report(context, `unexpected ${status}: ${response.request().method()} ${response.url()}`)
    })
    return context.newPage()
  }

  const port = new URL(String(ready?.address)).port
  return {
    url,
    server,
    smtp,
    firstSetupLink: () => LINK_LINE.exec(linkLine)?.[1] as string,
    async setUp(page, who) {
      expected.push({ status: 401, path: '/v1/user' })
      await page.goto(LINK_LINE.exec(linkLine)?.[1] as string)
      await page.getByRole('heading', { name: 'Set up statusd' }).waitFor()
      await page.getByLabel('Name').fill(who.name)
      await page.getByLabel('E-mail').fill(who.email)
      await page.getByLabel('Password').fill(who.password)
      await page.getByRole('button', { name: 'Finish setup' }).click()
      await page.waitForURL(`${url}/`)
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Board' })
        .waitFor()
    },
    firstApiKey: () => {
      assert.ok(keyLine, `the first start printed an API key:\n${server.output()}`)
      return KEY_LINE.exec(keyLine)?.[1] as string
    },
    open,
    expectResponse: (status, path) => void expected.push({ status, path }),
    async check(page, label, axe) {
      takeProblems(`before: ${label}`)
      await expectNoAxeViolations(page, label, axe)
      takeProblems(`at: ${label}`)
      // JOURNEY_SCREENSHOTS=<dir>: each checked page is kept there, named after its label, for
      // a person to walk the journey afterwards
      const shots = process.env.JOURNEY_SCREENSHOTS
      if (shots)
        await page.screenshot({
          path: path.join(shots, `${label.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '')}.png`),
          fullPage: true,
        })
    },
    mail() {
      assert.ok(smtp, 'startJourney(t, browser, { smtp: true }) to read mail')
      return smtp.next()
    },
    linkIn: (mail, pathPrefix) => linkIn(mail, `${url}${pathPrefix}`),
    async cli(...args) {
      const r = await runToEnd(t, process.execPath, [BIN, ...args], { ...env, PORT: port }, dir)
      assert.equal(r.code, 0, `statusd ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`)
      return r
    },
  }
}
