import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import {
  JOURNEY_TIMEOUT,
  journeyBrowser,
  SIZES,
  type Size,
  startJourney,
} from '../helpers/journey.ts'
import { confirmDialog, fitsTheScreen, openTab } from '../helpers/journey-people.ts'

// docs/app.md#schedule, as a shop owner does it: a status "Shop" with a palette (OPEN, CLOSED)
// is given a schedule on its Schedule tab — OPEN at 09:00 and CLOSED at 18:00 on weekdays,
// Berlin time — and the tab lists the next changes in the viewer's own time (the browser is
// in UTC: 09:00 in Berlin shows as 07:00 or 08:00). A mistyped cron is named at its entry;
// the schedule is removed behind a confirmation. On a phone and a desktop, each screen
// checked for console errors, CSP violations and axe findings.

const chromium = journeyBrowser()

for (const size of Object.keys(SIZES) as Size[]) {
  describe(`a status's schedule (${size})`, {
    skip: chromiumMissing(),
    timeout: JOURNEY_TIMEOUT,
  }, () => {
    it('set on the Schedule tab, its next changes shown in my time, then removed', async (t) => {
      const j = await startJourney(t, chromium())
      const page = await j.open(size)
      await j.setUp(page, { name: 'Sam Shop', email: 'sam@example.com', password: GOOD_PASSWORD })

      await page.getByRole('link', { name: 'Create a status' }).first().click()
      await page.getByRole('heading', { name: 'New status', level: 1 }).waitFor()
      await page.getByLabel('Name').fill('Shop')
      await page.getByLabel('Value', { exact: true }).fill('CLOSED')
      const palette = page.getByRole('group', { name: 'Palette' })
      for (const [n, value, colour] of [
        [1, 'OPEN', 'green'],
        [2, 'CLOSED', 'red'],
      ] as const) {
        await palette.getByRole('button', { name: 'Add a value' }).click()
        await palette.getByLabel(`Palette value ${n}`, { exact: true }).fill(value)
        await palette.getByLabel(`Colour of palette value ${n}`).selectOption({ label: colour })
      }
      await page.getByRole('button', { name: 'Create status' }).click()
      await page.getByRole('heading', { name: 'Shop', level: 1 }).waitFor()

      // the tab starts from my own time zone, with one empty entry
      await openTab(page, 'Schedule')
      const tab = page.getByRole('region', { name: 'Schedule' })
      const zone = tab.getByLabel('Time zone the times are in')
      assert.equal(await zone.inputValue(), 'UTC', "the viewer's time zone")
      await j.check(page, `an empty Schedule tab (${size})`)

      await zone.fill('Europe/Berlin')
      await tab.getByLabel('When, entry 1').fill('0 9 * * 1-5')
      await tab.getByLabel('Value, entry 1').fill('OPEN')
      await tab.getByRole('button', { name: 'Add an entry' }).click()
      await tab.getByLabel('When, entry 2').fill('0 25 * * 1-5')
      await tab.getByLabel('Value, entry 2').fill('CLOSED')

      // a mistyped hour: named at its entry, nothing saved
      const path = new URL(page.url()).pathname.split('/')[2] as string
      j.expectResponse(400, `/v1/status/${path}/schedule`)
      await tab.getByRole('button', { name: 'Save the schedule' }).click()
      await tab.getByText(/Entry 2, when: .*hour/).waitFor()
      assert.equal(await tab.getByLabel('When, entry 2').getAttribute('aria-invalid'), 'true')
      await j.check(page, `a Schedule tab with a mistyped cron (${size})`)

      await tab.getByLabel('When, entry 2').fill('0 18 * * 1-5')
      await tab.getByRole('button', { name: 'Save the schedule' }).click()
      await tab.getByText('Schedule saved.').waitFor()

      // the next 5 changes, in UTC (the browser's time): 09:00 and 18:00 in Berlin
      const next = tab.getByRole('list').filter({ has: page.locator('time') })
      const items = next.getByRole('listitem')
      await items.nth(4).waitFor()
      assert.equal(await items.count(), 5)
      for (let i = 0; i < 5; i++) {
        const item = items.nth(i)
        const iso = (await item.locator('time').getAttribute('datetime')) as string
        const text = (await item.textContent()) ?? ''
        const hour = new Date(iso).getUTCHours()
        const opens = /OPEN/.test(text)
        assert.ok(
          opens ? hour === 7 || hour === 8 : hour === 16 || hour === 17,
          `${text} (${iso}): 09:00 or 18:00 Berlin`,
        )
        assert.match(text, new RegExp(`${String(hour).padStart(2, '0')}:00`), 'shown in UTC')
      }
      assert.ok(await fitsTheScreen(page), 'nothing wider than the screen')
      await j.check(page, `a Schedule tab with its next changes (${size})`)

      // read again after a reload: the same schedule
      await page.reload()
      await page.getByRole('region', { name: 'Schedule' }).waitFor()
      assert.equal(await tab.getByLabel('Time zone the times are in').inputValue(), 'Europe/Berlin')
      assert.equal(await tab.getByLabel('When, entry 2').inputValue(), '0 18 * * 1-5')

      await tab.getByRole('button', { name: 'Remove the schedule' }).click()
      await j.check(page, `removing the schedule (${size})`)
      await confirmDialog(page, 'Remove')
      await tab.getByText('The schedule is removed').waitFor()
      assert.equal(await tab.locator('time').count(), 0, 'no next changes')
      await j.check(page, `the Schedule tab after the removal (${size})`)
    })
  })
}
