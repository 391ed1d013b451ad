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
import { holdPasskeys } from '../helpers/journey-people.ts'

// README.md "The first five minutes", step by step, as a newcomer does it: start the server,
// open the setup link its first start printed, give the account a name, an e-mail address
// and a password (on the phone) or a passkey (on the desktop), and be in the app as its
// operator; the link works once. Then make a status with a palette, make it public and open
// its share page, put it on a wall and change it from the board while the wall watches.

const PASSWORD = 'violet harbour lantern ferns'

const chromium = journeyBrowser()

/** The header's link to a place of the app (the same on a phone and on a desktop). */
const place = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name })

for (const size of Object.keys(SIZES) as Size[]) {
  // the phone sets a password, the desktop a passkey (its own virtual authenticator)
  const passkey = size === 'desktop'
  describe(`the first five minutes (${size})`, {
    skip: chromiumMissing(),
    timeout: JOURNEY_TIMEOUT,
  }, () => {
    it(`steps 1–5: set up by the printed link with ${passkey ? 'a passkey' : 'a password'}, then a status, Share, a wall`, async (t) => {
      // 1. `npm start`: the first start prints an API key and a one-time setup link; reached
      // as `localhost` (PUBLIC_URL), where a browser makes passkeys
      const j = await startJourney(t, chromium(), { localhost: true })
      const link = j.firstSetupLink()
      assert.match(link, new RegExp(`^${j.url}/setup/sdl_[A-Za-z0-9]{43}$`))
      assert.match(j.firstApiKey(), /^sdk_/)

      // 2. open the link: the app's setup screen (signed out, the app first hears 401 from /v1/user)
      const page = await j.open(size)
      if (passkey) await holdPasskeys(page)
      j.expectResponse(401, '/v1/user')
      await page.goto(link)
      await page.getByRole('heading', { name: 'Set up statusd' }).waitFor()
      await j.check(page, `the setup screen (${size})`)
      await page.getByLabel('Name').fill('Robin Operator')
      await page.getByLabel('E-mail').fill('me@example.com')
      if (passkey) {
        await page.bringToFront()
        await page.getByRole('button', { name: 'Use a passkey instead' }).click()
      } else {
        await page.getByLabel('Password').fill(PASSWORD)
        await page.getByRole('button', { name: 'Finish setup' }).click()
      }

      // … and you are in the app at `/`, signed in as the account you just set up
      await page.waitForURL(`${j.url}/`)
      await place(page, 'Board').waitFor()
      await j.check(page, `the board after the setup (${size})`)
      await place(page, 'Account').click()
      await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor()
      const profile = page.getByRole('region', { name: 'Profile' })
      assert.equal(await profile.getByLabel('Name').inputValue(), 'Robin Operator')
      assert.equal(await profile.getByLabel('E-mail').inputValue(), 'me@example.com')
      if (passkey)
        await page.getByRole('region', { name: 'Passkeys' }).getByRole('listitem').first().waitFor()
      await j.check(page, `Account after the setup (${size})`)

      // the link worked once: opened again, the screen says so, and how to get in
      const again = await j.open(size)
      j.expectResponse(410, new URL(link).pathname.replace(/^\/setup\//, '/v1/auth/setup/'))
      await again.goto(link)
      await again.getByRole('heading', { name: 'This setup link has expired' }).waitFor()
      await j.check(again, `the setup link used already (${size})`)

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

      // the way in chosen at the setup signs in again: the password from another browser,
      // the passkey on this desktop once signed out
      if (passkey) {
        await page.getByRole('button', { name: 'Sign out', exact: true }).click()
        await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor()
        await page.bringToFront()
        await page.getByRole('button', { name: 'Use a passkey' }).click()
        await place(page, 'Board').waitFor()
        await j.check(page, `signed in again with the passkey (${size})`)
        return
      }
      const other = await j.open(size)
      await other.goto(`${j.url}/sign-in`)
      await other.getByLabel('E-mail').fill('me@example.com')
      await other.getByLabel('Password').fill(PASSWORD)
      await other.getByRole('button', { name: 'Sign in', exact: true }).click()
      await other.waitForURL(`${j.url}/`)
      await place(other, 'Board').waitFor()
      await j.check(other, `signed in with the password (${size})`)
    })
  })
}
