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
import {
  fitsTheScreen,
  newStatus,
  onScreen,
  signInWithPassword,
} from '../helpers/journey-people.ts'

// docs/app.md#languages: a person whose browser speaks English picks Deutsch under Account.
// The app turns German at once, screen after screen, stays German after a reload, keeps the
// choice on the account (`locale`, for mails and notifications), and a browser that never
// chose starts in it once signed in as that person.

const PASSWORD = 'amber kettle mountain ferns'
const PERSON = { name: 'Kim Sprache', email: 'kim@example.com', password: PASSWORD }

const chromium = journeyBrowser()

/** The header's link to a place of the app. */
const place = (page: Page, navigation: string, name: string) =>
  page.getByRole('navigation', { name: navigation }).getByRole('link', { name, exact: true })

const htmlLang = (page: Page): Promise<string> =>
  page.evaluate('document.documentElement.lang') as Promise<string>

/** German's longer words still fit: nothing wider than the screen. */
async function fits(page: Page, label: string): Promise<void> {
  assert.ok(await fitsTheScreen(page), `${label} is wider than the screen`)
}

for (const size of Object.keys(SIZES) as Size[]) {
  describe(`languages in the app (${size})`, {
    skip: chromiumMissing(),
    timeout: JOURNEY_TIMEOUT,
  }, () => {
    it('languages: Deutsch picked under Account shows the app in German, after a reload and on another browser', async (t) => {
      const j = await startJourney(t, chromium())
      const page = await j.open(size)
      await j.setUp(page, PERSON)
      await newStatus(page, { name: 'Kitchen', value: 'FREE' })

      // the browser speaks English: so does the app, until the person picks another language
      await place(page, 'Main', 'Account').click()
      await onScreen(page, 'Account')
      assert.equal(await htmlLang(page), 'en')
      const saved = page.waitForResponse(
        (r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === '/v1/user',
      )
      await page.getByRole('region', { name: 'Language' }).getByRole('combobox').selectOption('de')
      assert.equal((await saved).status(), 200)

      // Account, at once in German: heading, sections, the navigation; <html lang> follows
      await onScreen(page, 'Konto')
      assert.equal(await htmlLang(page), 'de')
      await page.getByRole('heading', { name: 'Passwort', level: 2 }).waitFor()
      await page.getByRole('button', { name: 'Profil speichern' }).waitFor()
      await j.check(page, `Account in German (${size})`)
      await fits(page, `Account in German (${size})`)

      // screen after screen, through the German navigation
      await place(page, 'Hauptmenü', 'Board').click()
      await onScreen(page, 'Board')
      await page.getByRole('link', { name: 'Status anlegen' }).waitFor()
      // the tile says whose it is, in German
      await page
        .locator('li.board-tile')
        .filter({ hasText: /· Deiner$/m })
        .waitFor()
      await j.check(page, `the board in German (${size})`)
      await fits(page, `the board in German (${size})`)

      await place(page, 'Hauptmenü', 'API-Schlüssel').click()
      await onScreen(page, 'API-Schlüssel')
      await page.getByRole('heading', { name: 'Deine Schlüssel' }).waitFor()
      await j.check(page, `API keys in German (${size})`)
      await fits(page, `API keys in German (${size})`)

      await place(page, 'Hauptmenü', 'Benachrichtigungen').click()
      await onScreen(page, 'Benachrichtigungen')
      await page.getByRole('heading', { name: 'Kanal hinzufügen' }).waitFor()
      await j.check(page, `Notifications in German (${size})`)
      await fits(page, `Notifications in German (${size})`)

      await place(page, 'Hauptmenü', 'Wandanzeigen').click()
      await onScreen(page, 'Wandanzeigen')
      await page.getByRole('heading', { name: 'Neue Wandanzeige' }).waitFor()
      await j.check(page, `walls in German (${size})`)
      await fits(page, `walls in German (${size})`)

      // a reload starts in German, before its first screen shows
      await page.reload()
      await onScreen(page, 'Wandanzeigen')
      assert.equal(await htmlLang(page), 'de')
      await place(page, 'Hauptmenü', 'Konto').waitFor()
      assert.equal(
        await page.getByRole('navigation', { name: 'Main' }).count(),
        0,
        'no English navigation after the reload',
      )
      await j.check(page, `walls after a reload (${size})`)
      await fits(page, `walls after a reload (${size})`)

      // signed out, this browser keeps its choice: the sign-in screen is German too
      await page.getByRole('button', { name: 'Abmelden', exact: true }).click()
      await onScreen(page, 'Anmelden')
      await page.getByRole('link', { name: 'Konto anlegen' }).waitFor()
      assert.equal(await page.getByRole('combobox', { name: /^Sprache/ }).inputValue(), 'de')
      await j.check(page, `sign-in in German (${size})`)
      await fits(page, `sign-in in German (${size})`)

      // another browser, which never chose: English until signed in, then the account's German
      const other = await j.open(size)
      await signInWithPassword(other, j.url, PERSON.email, PASSWORD)
      await place(other, 'Hauptmenü', 'Konto').waitFor()
      assert.equal(await htmlLang(other), 'de')
      await place(other, 'Hauptmenü', 'Konto').click()
      await onScreen(other, 'Konto')
      assert.equal(
        await other.getByRole('region', { name: 'Sprache' }).getByRole('combobox').inputValue(),
        'de',
      )
      await j.check(other, `Account on another browser (${size})`)
      await fits(other, `Account on another browser (${size})`)
    })
  })
}
