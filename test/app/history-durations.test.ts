import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { asSession } from '../helpers/accounts.ts'
import { appServer, expectScreen, openApp, signUpPerson } from '../helpers/app-browser.ts'
import { createAs } from '../helpers/app-statuses.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'

// The History tab's time in each value (docs/app.md#time-in-each-value): today, 7 days and
// 30 days beside the chart, each value in its palette colour, at a phone's and a desktop's
// size, with no console error, no CSP violation and no axe finding.

const H = 60 * 60 * 1000

/** Records the page's CSP violations (the app is served with its Content-Security-Policy). */
async function watchCsp(page: Page): Promise<string[]> {
  const violations: string[] = []
  await page.exposeBinding('__cspViolation', (_source, text: string) => violations.push(text))
  await page.addInitScript(() => {
    const g = globalThis as unknown as {
      document: { addEventListener(type: string, fn: (e: Record<string, string>) => void): void }
      __cspViolation(text: string): void
    }
    g.document.addEventListener('securitypolicyviolation', (e) =>
      g.__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI}`),
    )
  })
  return violations
}

const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } }

describe('time in each value in the History tab', {
  skip: chromiumMissing(),
  timeout: 300_000,
}, () => {
  for (const [size, viewport] of Object.entries(SIZES))
    it(`shows today, 7 days and 30 days in the palette's colours (${size})`, async (ctx) => {
      const server = await appServer(ctx)
      const person = await signUpPerson(server, { name: 'Hana' })
      const door = await createAs(server, person, 'door', {
        name: 'Door',
        value: 'OPEN',
        palette: [
          { value: 'OPEN', colorNo: 3 },
          { value: 'SHUT', colorNo: 2 },
        ],
      })
      // the history: OPEN from 6 days ago, SHUT from 2 days ago (within the free plan's week)
      const now = Date.now()
      const db = server.t.database.db
      await db.deleteFrom('status_history').where('status_id', '=', door.id).execute()
      await db
        .insertInto('status_history')
        .values(
          [
            { value: 'OPEN', hours: -6 * 24 },
            { value: 'SHUT', hours: -2 * 24 },
          ].map(({ value, hours }, i) => ({
            status_id: door.id,
            change_no: i + 1,
            value,
            at: new Date(now + hours * H).toISOString(),
            by_user_id: person.id,
          })),
        )
        .execute()
      await db
        .updateTable('statuses')
        .set({ change_count: 2, value: 'SHUT' })
        .where('id', '=', door.id)
        .execute()

      const { page } = await openApp(ctx, server, { person, viewport, path: '/sign-in' })
      const csp = await watchCsp(page)
      await page.goto(`${server.origin}/statuses/${door.id}/history`)
      await expectScreen(page, 'Door')
      await page.locator('.value-chart canvas').waitFor()
      const range = page.getByRole('group', { name: 'Range' })
      const shown = async (label: string) => {
        const list = page.getByRole('list', { name: `Time in each value, ${label}` })
        await list.waitFor()
        return (await list.getByRole('listitem').allTextContents()).map((s) =>
          s.replace(/\s+/g, ' ').trim(),
        )
      }
      // today (since midnight here): SHUT all along
      assert.equal(
        await range.getByRole('button', { name: 'Today' }).getAttribute('aria-pressed'),
        'true',
      )
      const today = await shown('today')
      assert.equal(today.length, 1)
      assert.match(today[0] as string, /^SHUT.*\(100%\)$/)
      // 7 days: OPEN 4 days, SHUT 2 days, counted from the server's whole history
      await range.getByRole('button', { name: '7 days' }).click()
      assert.deepEqual(await shown('7 days'), ['OPEN4 days (67%)', 'SHUT2 days (33%)'])
      // 30 days: the same, as the status is only 6 days old
      await range.getByRole('button', { name: '30 days' }).click()
      assert.deepEqual(await shown('30 days'), ['OPEN4 days (67%)', 'SHUT2 days (33%)'])
      // each value in its palette colour: green for OPEN, red for SHUT, in the list and the bar
      const colours = await page.evaluate(
        "[...document.querySelectorAll('.duration-bar span')].map((s) => getComputedStyle(s).backgroundColor)",
      )
      assert.deepEqual(colours, ['rgb(21, 128, 61)', 'rgb(185, 28, 28)'])
      // beside the chart on a desktop, below it on a phone
      const chart = await page.locator('.value-chart').boundingBox()
      const panel = await page.locator('.time-in-values').boundingBox()
      assert.ok(chart && panel)
      if (size === 'desktop') assert.ok(panel.x > chart.x + chart.width / 2, 'beside the chart')
      else assert.ok(panel.y >= chart.y + chart.height - 1, 'below the chart')

      // a new value counts at once: today, OPEN joins SHUT
      await range.getByRole('button', { name: 'Today' }).click()
      await shown('today')
      await asSession(server.t, person.cookie, 'PATCH', `/v1/status/${door.id}`, { value: 'OPEN' })
      await page
        .getByRole('list', { name: 'Time in each value, today' })
        .getByRole('listitem')
        .filter({ hasText: 'OPEN' })
        .waitFor()

      await expectNoAxeViolations(page, `history with time in each value (${size})`)
      assert.deepEqual(csp, [], 'no CSP violation')
    })
})
