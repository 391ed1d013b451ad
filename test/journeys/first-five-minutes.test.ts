import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { chromiumMissing } from '../helpers/browser.ts'
import {
  JOURNEY_TIMEOUT,
  journeyBrowser,
  SIZES,
  type Size,
  startJourney,
} from '../helpers/journey.ts'

// README.md "The first five minutes", step by step, as a newcomer does it: start the server,
// copy the link its first start printed, open it, press the button, and be in the app;
// then give yourself an e-mail address and a password under Account.

const PASSWORD = 'violet harbour lantern ferns'

const chromium = journeyBrowser()

/** The header's link to a place of the app (the same on a phone and on a desktop). */
const place = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name })

for (const size of Object.keys(SIZES) as Size[]) {
  describe(`the first five minutes (${size})`, {
    skip: chromiumMissing(),
    timeout: JOURNEY_TIMEOUT,
  }, () => {
    it('steps 1–2: the printed link signs in; e-mail and password are set under Account', async (t) => {
      // 1. `npm start`: the first start prints an API key and a one-time sign-in link
      const j = await startJourney(t, chromium())
      const link = j.firstSignInLink()
      assert.match(link, new RegExp(`^${j.url}/auth/link/`))
      assert.match(j.firstApiKey(), /^sdk_/)

      // 2. open the link: a short page with one button, styled as the app
      const page = await j.open(size)
      await page.goto(link)
      await page.getByRole('heading', { name: 'Sign in to statusd' }).waitFor()
      await j.check(page, `the sign-in link's page (${size})`)
      await page.getByRole('button', { name: 'Sign in' }).click()

      // … and you are in the app at `/`, signed in
      await page.waitForURL(`${j.url}/`)
      await place(page, 'Board').waitFor()
      await j.check(page, `the board after the first sign-in (${size})`)

      // under Account, an e-mail address and a password
      await place(page, 'Account').click()
      await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor()
      const profile = page.getByRole('region', { name: 'Profile' })
      await profile.getByLabel('E-mail').fill('me@example.com')
      await profile.getByRole('button', { name: 'Save profile' }).click()
      await profile.getByText('Saved.').waitFor()
      const password = page.getByRole('region', { name: 'Password' })
      await password.getByLabel('New password').fill(PASSWORD)
      await password.getByRole('button', { name: 'Set a password' }).click()
      await password.getByText('Password changed.').waitFor()
      await j.check(page, `Account with e-mail and password set (${size})`)

      // the link worked once: opened again, it says so
      const again = await j.open(size)
      j.expectResponse(410, new URL(link).pathname)
      await again.goto(link)
      await again.getByRole('heading', { name: 'This link has expired' }).waitFor()

      // the password signs in from another browser
      const other = await j.open(size)
      // signed out, the app asks who is signed in, and hears: no one
      j.expectResponse(401, '/v1/user')
      await other.goto(`${j.url}/sign-in`)
      await other.getByLabel('E-mail').fill('me@example.com')
      await other.getByLabel('Password').fill(PASSWORD)
      await other.getByRole('button', { name: 'Sign in', exact: true }).click()
      await other.waitForURL(`${j.url}/`)
      await place(other, 'Board').waitFor()
      await j.check(other, `signed in with the new password (${size})`)
    })
  })
}
