import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { asSession } from '../helpers/accounts.ts'
import {
  type AppServer,
  appServer,
  expectScreen,
  openApp,
  type Person,
  signUpPerson,
} from '../helpers/app-browser.ts'
import { giveRole, makeStatus } from '../helpers/app-statuses.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import { fitsTheScreen } from '../helpers/journey-people.ts'

// The app in German (docs/languages.md): a device that chose Deutsch (the picker keeps it in
// localStorage `statusd.locale`) shows the status screen's tabs and the operators' screens in
// German (no English word left in their texts and labels), with dates and numbers as German
// writes them, at a phone's size and a desktop's,
// without console errors (openApp fails on them), axe findings or sideways scrolling.

const SIZES = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 900 },
}

/** English words none of the screens' German texts has (names and values here are German). */
const ENGLISH =
  /\b(the|and|of|to|is|you|your|with|Loading|Save|Copy|Delete|Remove|Settings|History|Share|People|Schedule|Users|Instance|Backups|Audit|Every|never|until|ago|Sign|Cancel|Done|Show)\b/g

/** The page's text, with its labels, titles, placeholders and image descriptions. */
const TEXT_OF_PAGE = `document.body.innerText + ' | ' + [...document.querySelectorAll('[aria-label],[title],[placeholder],img[alt]')]
  .map((e) => ['aria-label', 'title', 'placeholder', 'alt'].map((a) => e.getAttribute(a) ?? '').join(' '))
  .join(' | ')`

/** A status with a history, a follower, an open invitation link, a private link, a schedule. */
async function worldOf(server: AppServer, owner: Person) {
  const status = await makeStatus(server, owner, 'kitchen', {
    name: 'Küche',
    value: 'FREI',
    palette: [
      { value: 'FREI', colorNo: 3 },
      { value: 'BESETZT', colorNo: 2 },
    ],
  })
  const call = async (
    method: 'PATCH' | 'POST' | 'PUT',
    path: string,
    body?: Record<string, unknown>,
  ) => {
    const res = await asSession(server.t, owner.cookie, method, path, body)
    assert.ok(res.statusCode < 300, `${method} ${path}: ${res.statusCode} ${res.body}`)
  }
  await call('PATCH', `/v1/status/${status.id}`, { value: 'BESETZT' })
  await call('PATCH', `/v1/status/${status.id}`, { value: 'FREI' })
  const follower = await signUpPerson(server, { name: 'Jonas' })
  await giveRole(server, owner, status.id, follower, 'subscriber')
  await call('POST', `/v1/status/${status.id}/invitations`, {
    role: 'updater',
    maxUses: 3,
    expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
  })
  await call('POST', `/v1/status/${status.id}/share-links`, {})
  await call('PUT', `/v1/status/${status.id}/schedule`, {
    timezone: 'Europe/Berlin',
    entries: [{ cron: '0 9 * * 1-5', value: 'BESETZT' }],
  })
  return status
}

/** The status screen's tab `name`, opened from its tab list. */
async function openTab(page: Page, name: string) {
  const tabs = page.getByRole('navigation', { name: 'Status' })
  await tabs.getByRole('link', { name, exact: true }).click()
  await tabs.locator('a[aria-current="page"]', { hasText: name }).waitFor()
}

describe('the app in German: status tabs and admin screens', {
  skip: chromiumMissing(),
  timeout: 300_000,
}, () => {
  for (const [size, viewport] of Object.entries(SIZES))
    it(`languages: a device that chose Deutsch reads the status tabs and admin screens in German (${size})`, async (ctx) => {
      const server = await appServer(ctx)
      const owner = await signUpPerson(server, { name: 'Lena' })
      await server.t.database.db
        .updateTable('users')
        .set({ admin: 1 })
        .where('id', '=', owner.id)
        .execute()
      const status = await worldOf(server, owner)
      const { page, context } = await openApp(ctx, server, { person: owner, viewport })
      // the picker's choice on this device, kept before the app starts
      await context.addInitScript(() => localStorage.setItem('statusd.locale', 'de'))
      await page.goto(`${server.origin}/statuses/${status.id}`)
      // no English left, axe finds nothing, and the longer German words push nothing wider
      // than the screen
      const check = async (label: string) => {
        const text = (await page.evaluate(TEXT_OF_PAGE)) as string
        assert.deepEqual(text.match(ENGLISH), null, `${label} (${size}): English words`)
        await expectNoAxeViolations(page, `${label} (${size})`)
        if (await fitsTheScreen(page)) return
        const wide = await page.evaluate(
          "[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > innerWidth).map((e) => e.tagName + '.' + e.className + ': ' + (e.textContent ?? '').slice(0, 40))",
        )
        assert.fail(`${label} (${size}): wider than the screen:\n${(wide as string[]).join('\n')}`)
      }

      // Übersicht
      await expectScreen(page, 'Küche')
      assert.equal(await page.locator('html').getAttribute('lang'), 'de')
      const main = page.locator('main')
      await main.getByRole('heading', { name: 'Einstellungen' }).waitFor()
      await main.getByText('Wert gesetzt', { exact: false }).first().waitFor()
      await main.getByText(/\d+ Änderungen/).waitFor()
      await main.getByText('1 Abonnent', { exact: false }).waitFor()
      await main.getByRole('heading', { name: 'Diesen Status löschen' }).waitFor()
      await check('Übersicht')

      // Verlauf: the timeline, the chart, the time in each value
      await openTab(page, 'Verlauf')
      await main.getByRole('heading', { name: 'Verlauf' }).waitFor()
      const timeline = main.getByRole('list', { name: 'Wertänderungen, neueste zuerst' })
      await timeline.getByText('gerade eben').first().waitFor()
      await timeline.getByText('von Lena').first().waitFor()
      await main.getByRole('heading', { name: 'Dauer je Wert' }).waitFor()
      await main
        .getByRole('group', { name: 'Zeitraum' })
        .getByRole('button', { name: 'Heute' })
        .waitFor()
      await main.getByRole('list', { name: 'Dauer je Wert, heute' }).waitFor()
      await page.locator('.value-chart canvas').waitFor()
      await check('Verlauf')

      // Teilen
      await openTab(page, 'Teilen')
      await main.getByRole('heading', { name: 'Wer ihn sehen kann' }).waitFor()
      await main.getByRole('heading', { name: 'Freigabelink' }).waitFor()
      await main.getByRole('heading', { name: 'Private Links' }).waitFor()
      const links = main.getByRole('table', { name: 'Private Links' })
      await links.getByRole('columnheader', { name: 'Erstellt' }).waitFor()
      await links.getByRole('cell', { name: 'Gültig' }).waitFor()
      await check('Teilen')

      // Personen: the follower, the open invitation link, its uses in German
      await openTab(page, 'Personen')
      await main.getByRole('heading', { name: 'Offene Einladungen' }).waitFor()
      await main.getByText('Bearbeiter-Link: noch 3 von 3 Einlösungen', { exact: false }).waitFor()
      await main.getByLabel('Rolle von Jonas').waitFor()
      await main.getByRole('button', { name: 'Einladung erstellen' }).waitFor()
      await check('Personen')

      // Zeitplan: the next changes, dated in German
      await openTab(page, 'Zeitplan')
      await main.getByRole('heading', { name: 'Nächste Änderungen' }).waitFor()
      const fires = await main.locator('.schedule-next time').allTextContents()
      assert.ok(fires.length > 0, 'the next changes are listed')
      assert.match(fires[0] as string, /^(Mo|Di|Mi|Do|Fr)\.?,? /, `a German weekday: ${fires[0]}`)
      await main.getByRole('button', { name: 'Zeitplan speichern' }).waitFor()
      await check('Zeitplan')

      // Benachrichtigungen
      await openTab(page, 'Benachrichtigungen')
      await main.getByRole('group', { name: 'Benachrichtige mich' }).waitFor()
      await main.getByRole('radio', { name: 'Jede Änderung seines Werts' }).waitFor()
      await check('Benachrichtigungen')

      // the operators' screens
      await page.goto(`${server.origin}/admin`)
      await expectScreen(page, 'Konten')
      await main.getByRole('heading', { name: 'Alle Konten' }).waitFor()
      await main.getByText('2 Konten.').waitFor()
      await main.getByRole('searchbox', { name: 'Konto suchen' }).waitFor()
      await check('Konten')

      await page.goto(`${server.origin}/admin/instance`)
      await expectScreen(page, 'Instanz')
      await main.getByRole('heading', { name: 'In Betrieb' }).waitFor()
      await main.getByText('Laufzeit').waitFor()
      await main.getByRole('button', { name: 'Aktualisieren' }).waitFor()
      await check('Instanz')

      await page.goto(`${server.origin}/admin/backups`)
      await expectScreen(page, 'Sicherungen')
      await main.getByText('Sicherungen sind aus', { exact: false }).waitFor()
      await check('Sicherungen')

      await page.goto(`${server.origin}/admin/audit`)
      await expectScreen(page, 'Prüfprotokoll')
      const log = main.getByRole('list', {
        name: 'Sicherheitsereignisse aller Konten, neueste zuerst',
      })
      await log.getByText('Angemeldet durch die Registrierung').first().waitFor()
      await log.getByText('Rolle „Abonnent“ bei einem Status angenommen').waitFor()
      await main.getByRole('combobox', { name: 'Art' }).waitFor()
      await check('Prüfprotokoll')
    })
})
