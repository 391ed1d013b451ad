import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { type AppServer, appServer, signUpPerson } from '../helpers/app-browser.ts'
import { chromiumMissing, launchChromium } from '../helpers/browser.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'

// docs/security.md (open redirect): a `next=` target is parsed as a URL against the
// service's origin and used only when the result is on that origin (backslashes, tabs,
// encoded forms); otherwise signing in leads to the board, `/`. In real Chromium: its URL
// parser is the one an attacker's link meets.

type PageGlobal = {
  location: { origin: string; pathname: string; search: string; hash: string }
  document: { querySelector(selector: string): unknown }
}

/** `?next=` exactly as a link carries it (not encoded again), and where signing in leads. */
const SCENARIOS: { next: string; lands: string }[] = [
  // on this origin: kept
  { next: '/account', lands: '/account' },
  { next: '%2Fkeys%3Fx%3D1%23top', lands: '/keys?x=1#top' },
  { next: '/walls', lands: '/walls' },
  // another origin, however spelled: the board
  { next: '/\\evil.example/phish', lands: '/' },
  { next: '/%09/evil.example/x', lands: '/' },
  { next: '%2F%5Cevil.example%2Fphish', lands: '/' },
  { next: '\\\\evil.example/x', lands: '/' },
  { next: '//evil.example/x', lands: '/' },
  { next: '%2F%2Fevil.example', lands: '/' },
  { next: '/%0A/evil.example', lands: '/' },
  { next: 'https://evil.example/', lands: '/' },
  { next: 'https:evil.example', lands: '/' },
  { next: 'javascript:alert(1)', lands: '/' },
  { next: '', lands: '/' },
]

describe('a next= target is used only when it is on the service origin', {
  skip: chromiumMissing(),
  timeout: 300_000,
}, () => {
  const suite = suiteLifetime()
  let server: AppServer
  let browser: Awaited<ReturnType<typeof launchChromium>>
  const elsewhere: string[] = []
  const person = { email: 'next@example.com', password: GOOD_PASSWORD }
  before(async () => {
    server = await appServer(suite)
    await signUpPerson(server, { name: 'Nell', email: person.email })
    browser = await launchChromium()
    // any other host answers a page of its own: a redirect there is seen, not a DNS error
    await browser.context.route(
      (url) => url.hostname !== 'localhost',
      (route) => {
        elsewhere.push(route.request().url())
        return route.fulfill({ body: 'elsewhere', contentType: 'text/html' })
      },
    )
  })
  after(async () => {
    await browser?.close()
  })

  for (const s of SCENARIOS) {
    it(`next=${s.next || '(empty)'} → ${s.lands}`, async () => {
      await browser.context.clearCookies()
      elsewhere.length = 0
      const page = await browser.context.newPage()
      try {
        await page.goto(`${server.origin}/sign-in?next=${s.next}`)
        await page.getByLabel('E-mail').fill(person.email)
        await page.getByLabel('Password').fill(person.password)
        await page.getByRole('button', { name: 'Sign in', exact: true }).click()
        // the end of signing in: another origin's page, or the screen of the expected path
        await page.waitForFunction(
          ([origin, lands]) => {
            const { location, document } = globalThis as unknown as PageGlobal
            return (
              location.origin !== origin ||
              (location.pathname + location.search + location.hash === lands &&
                document.querySelector('main h1') !== null)
            )
          },
          [server.origin, s.lands] as const,
        )
        assert.deepEqual(elsewhere, [], 'no request left the service')
        const url = new URL(page.url())
        assert.equal(url.origin, server.origin, `next=${s.next} stays on the service`)
        assert.equal(url.pathname + url.search + url.hash, s.lands)
      } finally {
        await page.close()
      }
    })
  }
})
