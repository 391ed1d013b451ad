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
// then give yourself an e-mail address and a password under Account; make a status with a
// palette, make it public and open its share page, put it on a wall and change it from the
// board while the wall watches.

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
    it('steps 1–5: signed in by the printed link, then Account, a status, Share, a wall', async (t) => {
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

      // 3. a status on the board, "Meeting room 4", with a palette: FREE green, OCCUPIED red,
      // all on the New status form; its key is made from the name
      await place(page, 'Board').click()
      await page.getByRole('link', { name: 'Create a status' }).first().click()
      await page.getByRole('heading', { name: 'New status', level: 1 }).waitFor()
      await page.getByLabel('Name').fill('Meeting room 4')
      assert.equal(await page.getByLabel('Key', { exact: true }).inputValue(), 'meeting-room-4')
      await page.getByLabel('Value', { exact: true }).fill('FREE')
      const palette = page.getByRole('group', { name: 'Palette' })
      for (const [n, value, colour] of [
        [1, 'FREE', 'green'],
        [2, 'OCCUPIED', 'red'],
      ] as const) {
        await palette.getByRole('button', { name: 'Add a value' }).click()
        await palette.getByLabel(`Palette value ${n}`, { exact: true }).fill(value)
        await palette.getByLabel(`Colour of palette value ${n}`).selectOption({ label: colour })
      }
      await j.check(page, `the New status form with its palette (${size})`)
      await page.getByRole('button', { name: 'Create status' }).click()
      await page.getByRole('heading', { name: 'Meeting room 4', level: 1 }).waitFor()
      // the status's screen shows the key scripts and devices name it by
      const key = page.getByRole('region', { name: 'From scripts and devices' })
      assert.equal(await key.getByRole('textbox', { name: 'Key' }).inputValue(), 'meeting-room-4')
      await j.check(page, `a status with its palette (${size})`)
      // its tile offers both values as one-tap buttons
      await place(page, 'Board').click()
      const buttons = page.getByRole('list', { name: 'Set Meeting room 4' })
      await buttons.getByRole('button', { name: 'OCCUPIED' }).click()
      await buttons.getByRole('button', { name: 'OCCUPIED', pressed: true }).waitFor()
      await j.check(page, `the board with one tile (${size})`)

      // 4. public under Share: its share link opens its page for anyone. While the status is
      // private the tab asks for no badge (it would answer 404): it says so instead
      await page.getByRole('link', { name: 'Meeting room 4' }).click()
      await page
        .getByRole('navigation', { name: 'Status' })
        .getByRole('link', { name: 'Share' })
        .click()
      await page.getByText('No preview while the status is private').waitFor()
      await j.check(page, `the Share tab of a private status (${size})`)
      await page.getByLabel('Public: anyone with the link sees it').check()
      await page.getByRole('img', { name: 'Badge preview: Meeting room 4' }).waitFor()
      await page.getByText('The status is public.').waitFor()
      await j.check(page, `the Share tab of a public status (${size})`)
      const shareLink = await page.getByRole('textbox', { name: 'Share link' }).inputValue()
      const anyone = await j.open(size)
      await anyone.goto(shareLink)
      await anyone.getByRole('heading', { name: 'Meeting room 4' }).waitFor()
      await anyone.getByText('OCCUPIED').first().waitFor()
      await j.check(anyone, `the share page (${size})`)

      // 5. under Walls, a public wall of it; its page on the screen by the door; a tap on
      // the phone's board changes the wall at once
      await place(page, 'Walls').click()
      await page.getByRole('heading', { name: 'Walls', level: 1 }).waitFor()
      const newWall = page.getByRole('region', { name: 'New wall' })
      await newWall.getByLabel('Name').fill('By the door')
      await newWall.getByLabel('Meeting room 4').check()
      await newWall.getByRole('button', { name: 'Make wall' }).click()
      await page.getByRole('heading', { name: 'By the door', level: 1 }).waitFor()
      await j.check(page, `a wall (${size})`)
      const wallLink = new URL(
        await page.getByRole('textbox', { name: 'Wall link' }).inputValue(),
        j.url,
      ).href
      const door = await j.open('desktop')
      await door.goto(wallLink)
      const tile = door.getByRole('list', { name: 'Statuses' }).getByRole('listitem')
      await tile.getByText('OCCUPIED').waitFor()
      await j.check(door, `the wall (${size})`)
      await place(page, 'Board').click()
      await buttons.getByRole('button', { name: 'FREE' }).click()
      await tile.getByText('FREE').waitFor()

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
