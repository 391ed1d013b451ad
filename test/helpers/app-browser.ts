import assert from 'node:assert/strict'
import type { BrowserContext, Page } from 'playwright-core'
import type { AppDeps } from '../../src/app.ts'
import type { Plans } from '../../src/modules/plans/plans.ts'
import { GOOD_PASSWORD, signUpUser } from './accounts.ts'
import { makeApp, type TestApp } from './app.ts'
import { launchChromium } from './browser.ts'
import type { Lifetime } from './cleanup.ts'
import { freePort } from './webauthn.ts'

// The app in real Chromium (docs/app.md): a statusd listening on a socket at
// http://localhost:<port> (a secure context, as service workers and passkeys need), browser
// profiles of their own in one Chromium for the test file, and people signed up through the
// API.

export interface AppServer {
  t: TestApp
  /** `http://localhost:<port>`: the app's origin (PUBLIC_URL). */
  origin: string
}

/**
 * A statusd for the app, anyone may sign up (SIGNUP=open) unless `deps` says otherwise.
 * PUBLIC_URL is the server's origin, unless `deps.publicUrl` is `null` (none set: the API's
 * links are paths then). `options.plans` replaces the tests' plans (TEST_PLANS).
 */
export async function appServer(
  ctx: Lifetime,
  deps: Omit<Partial<AppDeps>, 'database' | 'plans'> = {},
  options: { plans?: Plans } = {},
): Promise<AppServer> {
  const port = await freePort()
  const origin = `http://localhost:${port}`
  const publicUrl = deps.publicUrl === null ? null : origin
  const t = await makeApp(ctx, { ...options, deps: { signup: 'open', ...deps, publicUrl } })
  await t.app.listen({ port, host: '127.0.0.1' })
  return { t, origin }
}

export interface Person {
  id: string
  email: string
  name: string
  /** The value of their `statusd_session` cookie. */
  cookie: string
}

let people = 0

/** Signs a new person up through the API (not the browser): the fast way to a session. */
export async function signUpPerson(
  server: AppServer,
  { name = 'Ada', email = `person${++people}@example.com` } = {},
): Promise<Person> {
  const { id, cookie } = await signUpUser(server.t, { name, email, password: GOOD_PASSWORD })
  return { id, email, name, cookie }
}

export interface Browser {
  context: BrowserContext
  page: Page
}

/**
 * A browser profile of its own (a context in the test file's Chromium, browser.ts: its own
 * cookies, storage, service worker), signed in as `person` when given, with its page at
 * `path`. Closed when `ctx` ends. Errors the page
 * logs fail the test at the end, unless `allowConsoleErrors` (a test about a failure).
 */
export async function openApp(
  ctx: Lifetime,
  server: AppServer,
  options: {
    person?: Person
    path?: string
    viewport?: { width: number; height: number }
    colorScheme?: 'light' | 'dark'
    allowConsoleErrors?: boolean
    /** The page's timers and Date stand still until the test moves them (`page.clock`). */
    fakeClock?: boolean
  } = {},
): Promise<Browser> {
  const browser = await launchChromium({
    viewport: options.viewport ?? { width: 1280, height: 900 },
    colorScheme: options.colorScheme ?? 'light',
  })
  const { context } = browser
  if (options.person)
    await context.addCookies([
      { name: 'statusd_session', value: options.person.cookie, url: server.origin },
    ])
  const page = context.pages()[0] ?? (await context.newPage())
  const errors: string[] = []
  page.on('console', (message) => {
    // note: Chromium logs every 4xx answer as "Failed to load resource"; the app expects
    // some (a 401 tells it nobody is signed in), and tests check answers themselves
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(String(error)))
  // one hook: the profile closes even when the check fails
  ctx.after(async () => {
    await browser.close()
    if (!options.allowConsoleErrors) assert.deepEqual(errors, [], 'the page logged no errors')
  })
  if (options.fakeClock) await context.clock.install()
  await page.goto(server.origin + (options.path ?? '/'))
  return { context, page }
}

/** Waits until the screen's heading says `text` (each screen has one h1). */
export async function expectScreen(page: Page, text: string | RegExp): Promise<void> {
  await page.locator('main h1').filter({ hasText: text }).waitFor()
}
